import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import { resolveFunctionByHostname } from '../../lib/functions/resolve.ts';
import { repoRoot } from '../../lib/local/api-server.ts';
import { routeManifestKey } from '../../lib/sites/storage-keys.ts';
import { cliEntry, freshConfigHome, runCli } from '../support/cli.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { doorRequest } from '../support/door.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';

/**
 * `slipway deploy` of a folder whose functions import npm packages installed
 * in its node_modules/: no extra step, and only the imported files are sent.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let env: Record<string, string>;
let folder: string;
const subdomain = `clifn-${randomBytes(4).toString('hex')}`;
const packages = join(repoRoot, 'test/fixtures/functions-build/packages');

function write(dir: string, files: Record<string, string>) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

const countFiles = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setFunctionsEnrolment(m.team.id, true);
  env = { SLIPWAY_API_URL: platform.baseUrl, SLIPWAY_TOKEN: m.apiKey.token, XDG_CONFIG_HOME: freshConfigHome() };
  folder = mkdtempSync(join(tmpdir(), 'slipway-deploy-functions-'));
  write(folder, {
    'index.html': '<h1>hono</h1>',
    'functions/api.ts': "import { Hono } from 'hono'; const app = new Hono(); app.get('/', c => c.text('hi')); export default app;\n",
    'functions/greet.js': "import greeting from 'tiny-greeting';\nexport default () => new Response(greeting('hey'));\n",
  });
  // Installed packages: hono (from this repository's node_modules), the fixture package, and one nothing imports.
  cpSync(join(repoRoot, 'node_modules/hono'), join(folder, 'node_modules/hono'), { recursive: true });
  cpSync(join(packages, 'tiny-greeting'), join(folder, 'node_modules/tiny-greeting'), { recursive: true });
  cpSync(join(packages, 'unused-package'), join(folder, 'node_modules/unused-package'), { recursive: true });
});
afterAll(() => platform?.stop());

describe('slipway deploy with functions', { timeout: 120_000 }, () => {
  it('builds a hono app from the folder and sends only the package files the functions import', async () => {
    const run = await runCli(['deploy', folder, '--subdomain', subdomain, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.functions).toEqual([
      { name: 'api', url: `http://api-${subdomain}.fn.localhost:${platform.port}/` },
      { name: 'greet', url: `http://greet-${subdomain}.fn.localhost:${platform.port}/` },
    ]);

    const project = await platform.api('GET', `/api/v1/projects/${summary.project_id}`, { token: m.apiKey.token });
    const manifestReply = await s3().send(
      new GetObjectCommand({
        Bucket: config.bucket('sites'),
        Key: routeManifestKey(m.team.id, project.body.data.slug, summary.deployment_id),
      }),
    );
    const paths = Object.keys(JSON.parse(await manifestReply.Body!.transformToString()).files);
    const sent = paths.filter((p) => p.startsWith('node_modules/'));
    expect(sent).toContain('node_modules/hono/package.json');
    expect(sent).toContain('node_modules/tiny-greeting/package.json');
    expect(sent).toContain('node_modules/tiny-greeting/index.js');
    expect(
      sent.every((p) => p.startsWith('node_modules/hono/') || p.startsWith('node_modules/tiny-greeting/')),
      sent.join('\n'),
    ).toBe(true);
    expect(sent.some((p) => p.includes('unused-package'))).toBe(false);
    // Only what the bundle reads, not the whole package.
    const honoSent = sent.filter((p) => p.startsWith('node_modules/hono/')).length;
    expect(honoSent).toBeGreaterThan(1);
    expect(honoSent).toBeLessThan(countFiles(join(folder, 'node_modules/hono')) / 4);
    expect(summary.files_total).toBe(paths.length);

    const api = await resolveFunctionByHostname(`api-${subdomain}.fn.localhost:${platform.port}`);
    expect(api?.deployment_id).toBe(summary.deployment_id);
    // The Hono app and the packaged function answer through the HTTPS door, in the sandbox.
    const hono = await doorRequest(platform.port, `api-${subdomain}.fn.localhost:${platform.port}`);
    expect([hono.status, hono.text]).toEqual([200, 'hi']);
    expect(hono.headers['content-type']).toBe('text/plain;charset=UTF-8');
    const greet = await doorRequest(platform.port, `greet-${subdomain}.fn.localhost:${platform.port}`);
    expect([greet.status, greet.text]).toEqual([200, 'hey from string']);

    const detail = await platform.api('GET', `/api/v1/projects/${summary.project_id}/deployments/${summary.deployment_id}`, {
      token: m.apiKey.token,
    });
    expect(detail.body.data.functions).toEqual(['api', 'greet']);
    // The packages sent for the functions are not site files.
    const site = await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/node_modules/hono/package.json');
    expect(site.status).toBe(404);
  });

  it("honours the project's root_directory: the functions and the packages they import are collected inside it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-deploy-root-'));
    write(dir, {
      'index.html': '<h1>monorepo</h1>',
      'app/functions/greet.js': "import greeting from 'tiny-greeting';\nexport default () => new Response(greeting('from app'));\n",
    });
    cpSync(join(packages, 'tiny-greeting'), join(dir, 'app/node_modules/tiny-greeting'), { recursive: true });
    const sub = `root-${randomBytes(3).toString('hex')}`;
    const first = await runCli(['deploy', dir, '--subdomain', sub, '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const projectId = JSON.parse(first.stdout).project_id as string;
    expect(
      (await platform.api('PATCH', `/api/v1/projects/${projectId}`, { token: m.apiKey.token, body: { root_directory: 'app' } })).status,
    ).toBe(200);

    const again = await runCli(['deploy', dir, '--project', projectId, '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout);
    expect(summary.functions).toEqual([{ name: 'greet', url: `http://greet-${sub}.fn.localhost:${platform.port}/` }]);
    const greet = await doorRequest(platform.port, `greet-${sub}.fn.localhost:${platform.port}`);
    expect([greet.status, greet.text]).toEqual([200, 'from app from string']);
  });

  it("follows pnpm's symlinked node_modules: each package, and the packages it depends on, is sent where the build finds it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-deploy-pnpm-'));
    write(dir, {
      'index.html': '<h1>pnpm</h1>',
      'functions/shout.js': "import shout from 'shouty';\nexport default () => new Response(shout('hey'));\n",
      'functions/greet.js': "import greeting from 'tiny-greeting';\nexport default () => new Response(greeting('hi'));\n",
      // pnpm's store: each package in node_modules/.pnpm/{name}@{version}/node_modules/{name}, its dependencies linked beside it.
      'node_modules/.pnpm/shouty@1.0.0/node_modules/shouty/package.json':
        '{ "name": "shouty", "version": "1.0.0", "main": "lib/index.js" }',
      'node_modules/.pnpm/shouty@1.0.0/node_modules/shouty/lib/index.js':
        "const greeting = require('tiny-greeting');\nconst { loud } = require('./loud.js');\nmodule.exports = (word) => loud(greeting(word));\n",
      'node_modules/.pnpm/shouty@1.0.0/node_modules/shouty/lib/loud.js': 'exports.loud = (text) => text.toUpperCase();\n',
    });
    cpSync(join(packages, 'tiny-greeting'), join(dir, 'node_modules/.pnpm/tiny-greeting@1.0.0/node_modules/tiny-greeting'), {
      recursive: true,
    });
    symlinkSync(
      '../../tiny-greeting@1.0.0/node_modules/tiny-greeting',
      join(dir, 'node_modules/.pnpm/shouty@1.0.0/node_modules/tiny-greeting'),
    );
    // The project's direct dependencies, linked at the top.
    symlinkSync('.pnpm/shouty@1.0.0/node_modules/shouty', join(dir, 'node_modules/shouty'));
    symlinkSync('.pnpm/tiny-greeting@1.0.0/node_modules/tiny-greeting', join(dir, 'node_modules/tiny-greeting'));

    const sub = `pnpm-${randomBytes(3).toString('hex')}`;
    const run = await runCli(['deploy', dir, '--subdomain', sub, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    const shout = await doorRequest(platform.port, `shout-${sub}.fn.localhost:${platform.port}`);
    expect([shout.status, shout.text]).toEqual([200, 'HEY FROM STRING']);
    const greet = await doorRequest(platform.port, `greet-${sub}.fn.localhost:${platform.port}`);
    expect([greet.status, greet.text]).toEqual([200, 'hi from string']);

    const project = await platform.api('GET', `/api/v1/projects/${summary.project_id}`, { token: m.apiKey.token });
    const manifestReply = await s3().send(
      new GetObjectCommand({
        Bucket: config.bucket('sites'),
        Key: routeManifestKey(m.team.id, project.body.data.slug, summary.deployment_id),
      }),
    );
    const sent = Object.keys(JSON.parse(await manifestReply.Body!.transformToString()).files).filter((p) => p.startsWith('node_modules/'));
    // Each package once, where a plain-file resolution from its importer finds it; nothing of the store's layout.
    expect(sent.sort()).toEqual([
      'node_modules/shouty/lib/index.js',
      'node_modules/shouty/lib/loud.js',
      'node_modules/shouty/package.json',
      'node_modules/tiny-greeting/index.js',
      'node_modules/tiny-greeting/package.json',
    ]);
  });

  it('a failed functions build prints its build log and exits 1', async () => {
    const broken = mkdtempSync(join(tmpdir(), 'slipway-deploy-broken-'));
    write(broken, { 'index.html': '<h1>broken</h1>', 'functions/Bad_Name.js': 'export default () => new Response("x");\n' });
    const run = await runCli(['deploy', broken, '--subdomain', `broken-${randomBytes(3).toString('hex')}`], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('(FUNCTIONS_BUILD_FAILED)');
    expect(run.stderr).toContain('  [functions] Build failed: invalid function name');
  });

  it("a built app's dist/: deploy and dev find the app's functions/ and node_modules/ the same way, and say so", async () => {
    // functions/ at the app's root, beside dist/ (a Vite build does not copy it); the package in the app's node_modules/.
    const app = mkdtempSync(join(tmpdir(), 'slipway-built-app-'));
    write(app, {
      'package.json': '{"name":"built-app","scripts":{"build":"vite build"}}',
      'dist/index.html': '<h1>built</h1>',
      'functions/greet.js': "import greeting from 'tiny-greeting';\nexport default () => new Response(greeting('built'));\n",
    });
    cpSync(join(packages, 'tiny-greeting'), join(app, 'node_modules/tiny-greeting'), { recursive: true });
    const dist = join(app, 'dist');
    const line = `Functions: ${join(app, 'functions')}/, the app's (dist/ has no functions/ of its own); their packages from its node_modules/.\n`;
    const sub = `built-${randomBytes(3).toString('hex')}`;
    const run = await runCli(['deploy', dist, '--subdomain', sub, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(line);
    expect(JSON.parse(run.stdout).functions).toEqual([{ name: 'greet', url: `http://greet-${sub}.fn.localhost:${platform.port}/` }]);
    const greet = await doorRequest(platform.port, `greet-${sub}.fn.localhost:${platform.port}`);
    expect([greet.status, greet.text]).toEqual([200, 'built from string']);

    // The same folder under slipway dev; then functions inside dist/ importing the app's package, which deploy sends too.
    const devAnswer = async () => {
      const child = spawn(process.execPath, [cliEntry(), 'dev', dist, '--port', '0'], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'ERROR' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', () => /Ctrl-C stops/.test(out) && resolve());
          child.once('exit', (code) => reject(new Error(`slipway dev exited (${code}): ${out}`)));
        });
        const url = new URL(/Function greet:\s+(\S+)/.exec(out)![1]!);
        return { out, reply: await doorRequest(Number(url.port), url.host) };
      } finally {
        child.kill('SIGINT');
      }
    };
    const fromApp = await devAnswer();
    expect(fromApp.out).toContain(line);
    expect([fromApp.reply.status, fromApp.reply.text]).toEqual([200, 'built from string']);
    write(dist, { 'functions/greet.js': "import greeting from 'tiny-greeting';\nexport default () => new Response(greeting('dist'));\n" });
    const inDist = await devAnswer();
    expect(inDist.out).not.toContain('Functions: ');
    expect([inDist.reply.status, inDist.reply.text]).toEqual([200, 'dist from string']);
  });
});

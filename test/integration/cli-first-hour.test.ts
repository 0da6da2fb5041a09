import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { freshConfigHome, runCli } from '../support/cli.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { site } from '../support/uploads.ts';

/**
 * The CLI in a new user's first hour (issue 21): it finds the running platform
 * from any folder, links a folder to its project as soon as begin-upload
 * answers (so a failed deploy is retried into the same project), names and
 * links a build folder after its app, and refuses an app's source.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let env: Record<string, string>;

function write(dir: string, files: Record<string, string>) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

const folder = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-first-hour-'));
  write(dir, files);
  return dir;
};

async function projectsNamed(name: string): Promise<{ id: string; name: string }[]> {
  const reply = await platform.api('GET', '/api/v1/projects?limit=100', { token: m.apiKey.token });
  const list = Array.isArray(reply.body.data) ? reply.body.data : reply.body.data.projects;
  return list.filter((p: { name: string }) => p.name === name);
}

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setFunctionsEnrolment(m.team.id, true);
  env = { SLIPWAY_API_URL: platform.baseUrl, SLIPWAY_TOKEN: m.apiKey.token, XDG_CONFIG_HOME: freshConfigHome() };
});
afterAll(() => platform?.stop());

describe('the running platform, from any folder', () => {
  it('login in a site folder uses the address `npm run dev` recorded at user level, and says which', async () => {
    const state = mkdtempSync(join(tmpdir(), 'slipway-user-state-'));
    const record = join(state, 'slipway', 'platforms', 'somewhere-0123456789ab.json');
    mkdirSync(join(state, 'slipway', 'platforms'), { recursive: true });
    writeFileSync(
      record,
      JSON.stringify({ pid: process.pid, baseUrl: platform.baseUrl, repo: '/somewhere', started_at: new Date().toISOString() }),
    );
    const home = freshConfigHome();
    const siteDir = folder({ 'index.html': '<p>x</p>' });
    const run = await runCli(['login', '--token', m.owner.token], { XDG_CONFIG_HOME: home, XDG_STATE_HOME: state }, { cwd: siteDir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`Using the API at ${platform.baseUrl} (from the running local platform of /somewhere (${record}))`);
    expect(run.stdout).toContain(`Logged in to ${platform.baseUrl}`);
    expect(JSON.parse(readFileSync(join(home, 'slipway', 'config.json'), 'utf8')).api_url).toBe(platform.baseUrl);
  });

  it("two checkouts' platforms keep a record each: inside a checkout its own is used, elsewhere the one started last", async () => {
    const state = mkdtempSync(join(tmpdir(), 'slipway-user-state-'));
    const checkouts = mkdtempSync(join(tmpdir(), 'slipway-checkouts-'));
    const records = join(state, 'slipway', 'platforms');
    mkdirSync(records, { recursive: true });
    // Two platforms, both alive (this process's pid); the second answers at an address of its own.
    const second = `http://127.0.0.1:${platform.port}`;
    const write = (name: string, baseUrl: string, startedAt: string) => {
      mkdirSync(join(checkouts, name));
      writeFileSync(
        join(records, `${name}.json`),
        JSON.stringify({ pid: process.pid, baseUrl, repo: join(checkouts, name), started_at: startedAt }),
      );
    };
    write('a', platform.baseUrl, '2026-11-27T10:00:00.000Z');
    write('b', second, '2026-11-27T09:00:00.000Z');
    const login = (cwd: string) =>
      runCli(['login', '--token', m.owner.token], { XDG_CONFIG_HOME: freshConfigHome(), XDG_STATE_HOME: state }, { cwd });
    const inB = await login(join(checkouts, 'b'));
    expect(inB.stderr).toContain(
      `Using the API at ${second} (from the running local platform of ${join(checkouts, 'b')} (${join(records, 'b.json')}))`,
    );
    const elsewhere = await login(folder({ 'index.html': '<p>x</p>' }));
    expect(elsewhere.stderr).toContain(
      `Using the API at ${platform.baseUrl} (from the running local platform of ${join(checkouts, 'a')} (${join(records, 'a.json')}))`,
    );
  });

  it('a record left by a platform that is gone (its pid) is not used', async () => {
    const state = mkdtempSync(join(tmpdir(), 'slipway-user-state-'));
    mkdirSync(join(state, 'slipway', 'platforms'), { recursive: true });
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => dead.once('exit', resolve));
    writeFileSync(
      join(state, 'slipway', 'platforms', 'x-0123456789ab.json'),
      JSON.stringify({ pid: dead.pid, baseUrl: platform.baseUrl, repo: '/x', started_at: '' }),
    );
    const run = await runCli(['login', '--token', m.owner.token], { XDG_CONFIG_HOME: freshConfigHome(), XDG_STATE_HOME: state });
    expect(run.stderr).toContain('Using the API at http://localhost:3000 (from the default address (no local platform is running))');
  });
});

describe('a folder is linked as soon as begin-upload answers', { timeout: 120_000 }, () => {
  it('a deploy whose functions build failed is retried into the same project, not a second one', async () => {
    const dir = folder({ 'index.html': '<p>retry</p>', 'functions/api.js': 'export default () => { return new Response(; };\n' });
    const failed = await runCli(['deploy', dir, '--json'], { ...env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('FUNCTIONS_BUILD_FAILED');
    // The fixed deploy keeps the folder's name; before the link it was refused with PROJECT_NAME_TAKEN.
    writeFileSync(join(dir, 'functions/api.js'), "export default () => new Response('fixed');\n");
    const fixed = await runCli(['deploy', dir, '--json'], { ...env });
    expect(fixed.code, fixed.stderr).toBe(0);
    const summary = JSON.parse(fixed.stdout);
    const projects = await projectsNamed(dir.split('/').pop()!);
    expect(projects.map((p) => p.id)).toEqual([summary.project_id]);
    expect(summary.functions.map((f: { name: string }) => f.name)).toEqual(['api']);
  });
});

describe('a build folder is named and linked after its app', { timeout: 120_000 }, () => {
  it('deploy dist takes the package.json name; rollback in the app folder finds the project', async () => {
    const appName = `vite-app-${randomBytes(4).toString('hex')}`;
    const app = folder({
      'package.json': JSON.stringify({ name: appName, scripts: { build: 'vite build' } }),
      'index.html': '<script type="module" src="/src/main.ts"></script>',
      'src/main.ts': "document.body.textContent = 'hi';\n",
      'dist/index.html': '<h1>v1</h1><script type="module" src="/assets/index-1.js"></script>',
      'dist/assets/index-1.js': "document.title = 'v1';\n",
    });
    const first = await runCli(['deploy', 'dist', '--json'], env, { cwd: app });
    expect(first.code, first.stderr).toBe(0);
    const one = JSON.parse(first.stdout);
    expect((await projectsNamed(appName)).map((p) => p.id)).toEqual([one.project_id]);
    write(app, { 'dist/index.html': '<h1>v2</h1>' });
    const second = await runCli(['deploy', join(app, 'dist'), '--json'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).project_id).toBe(one.project_id);

    const rollback = await runCli(['rollback', '--json'], env, { cwd: app });
    expect(rollback.code, rollback.stderr).toBe(0);
    expect(JSON.parse(rollback.stdout)).toMatchObject({ id: one.project_id, live_deployment_id: one.deployment_id });
    // From a folder inside the app too.
    const functions = await runCli(['functions', '--json'], env, { cwd: join(app, 'src') });
    expect(functions.code, functions.stderr).toBe(0);
  });
});

describe('an unbuilt app is refused', { timeout: 60_000 }, () => {
  it('the CLI refuses a folder whose index.html loads /src/main.ts, naming the build folder to deploy, and sends nothing', async () => {
    const name = `unbuilt-${randomBytes(4).toString('hex')}`;
    const app = folder({
      'package.json': JSON.stringify({ name, scripts: { build: 'vite build' } }),
      'index.html': '<div id="app"></div><script type="module" src="/src/main.ts"></script>',
      'src/main.ts': "document.querySelector('#app')!.textContent = 'hi';\n",
      'dist/index.html': '<h1>built</h1>',
    });
    const run = await runCli(['deploy', '.', '--name', name], env, { cwd: app });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "slipway: . (its index.html loads /src/main.ts) is an app's source, not its build: deploy its build output dist/ instead. (UPLOAD_SOURCE_CODE)\n",
    );
    expect(await projectsNamed(name)).toEqual([]);
  });

  it('the CLI refuses a folder whose package.json has a build script and no build output', async () => {
    const app = folder({
      'package.json': JSON.stringify({ scripts: { build: 'astro build' } }),
      'astro.config.mjs': 'export default {}',
      'README.md': 'r',
    });
    const run = await runCli(['deploy', app], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('its package.json has a build script and there is no build output');
    expect(run.stderr).toContain(
      'run its build (npm run build), then deploy the output folder (dist/ for Vite) instead. (UPLOAD_SOURCE_CODE)',
    );
  });

  it("begin-upload refuses Vite's own template (no config file) with UPLOAD_SOURCE_CODE and the folder to deploy", async () => {
    const files = site({
      'index.html': '<script type="module" src="/src/main.ts"></script>',
      'package.json': '{"scripts":{"build":"vite build"}}',
      'src/main.ts': 'x',
      'public/vite.svg': '<svg/>',
    });
    const reply = await platform.api('POST', '/api/v1/uploads', {
      token: m.apiKey.token,
      body: { files: files.files, project: { name: `v-${randomBytes(3).toString('hex')}` } },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.code).toBe('UPLOAD_SOURCE_CODE');
    expect(reply.body.error).toBe(
      "This upload is an app's source, not its build: run its build (npm run build), then deploy the output folder (dist/ for Vite) instead.",
    );
    expect(reply.body.details).toEqual({ markers: ['package.json', 'src/main.ts'], deploy_instead: null });
  });
});

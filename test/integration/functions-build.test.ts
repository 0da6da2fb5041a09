import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { resolveFunctionByHostname } from '../../lib/functions/resolve.ts';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { repoRoot } from '../../lib/local/api-server.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { putMissing, site, type SiteFiles } from '../support/uploads.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

/**
 * Build at publish through the real upload API (begin, PUT, finalize): what
 * is bundled, what fails a build (and that a failed build publishes nothing),
 * removal by deleting a file, rollback, and that function sources are never
 * served as site files.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

const fixtures = join(repoRoot, 'test/fixtures/functions-build');

/** Every file under `dir` as manifest path -> bytes, under `prefix`. */
function readTree(dir: string, prefix = ''): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const absolute = join(entry.parentPath, entry.name);
    out[`${prefix}${relative(dir, absolute).split('\\').join('/')}`] = readFileSync(absolute);
  }
  return out;
}

/** The basic fixture with its package installed, plus or minus files (null removes one). */
function fixtureSite(changes: Record<string, string | Buffer | null> = {}): SiteFiles {
  const files: Record<string, string | Buffer> = {
    ...readTree(join(fixtures, 'basic')),
    ...readTree(join(fixtures, 'packages/tiny-greeting'), 'node_modules/tiny-greeting/'),
  };
  // A type error (kept out of the fixture file so that `tsc -p .` stays clean): the build does not check types.
  files['functions/typed.ts'] = files['functions/typed.ts']!.toString().replace('const wrong = ', 'const wrong: number = ');
  for (const [path, content] of Object.entries(changes)) {
    if (content === null) delete files[path];
    else files[path] = content;
  }
  return site(files);
}

const subdomainOf = () => `fb-${randomBytes(4).toString('hex')}`;

/** Begin (a new project, or a new session of `projectId`), send what is missing, finalize: the finalize reply. */
async function deployFunctions(s: SiteFiles, target: { projectId?: string; subdomain?: string }) {
  const token = m.member.token;
  const begin = target.projectId
    ? await platform.api('POST', `/api/v1/projects/${target.projectId}/uploads`, { token, body: { files: s.files } })
    : await platform.api('POST', '/api/v1/uploads', {
        token,
        body: { files: s.files, project: { name: target.subdomain, subdomain: target.subdomain } },
      });
  expect(begin.status, begin.text).toBe(201);
  await putMissing(platform, token, begin.body.data.upload_id, begin.body.data.missing, s);
  const finalize = await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token });
  return { begin: begin.body.data, finalize };
}

const host = (name: string, subdomain: string) => `${name}-${subdomain}.fn.localhost:${platform.port}`;

async function bundleText(key: string): Promise<string> {
  const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: key }));
  return reply.Body!.transformToString();
}

/** Loads a bundle as the runner would (an ES module file) and calls its handler. */
async function runBundle(key: string): Promise<Response> {
  const file = join(mkdtempSync(join(tmpdir(), 'slipway-bundle-')), 'fn.mjs');
  writeFileSync(file, await bundleText(key));
  const mod = await import(pathToFileURL(file).href);
  const handler = typeof mod.default === 'function' ? mod.default : mod.default.fetch.bind(mod.default);
  return handler(new Request('http://fn.invalid/'), { env: {}, waitUntil: () => undefined });
}

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  // Many upload sessions in a row.
  await setTeamPlan(m.team.id, 'team');
});
afterAll(() => platform?.stop());

describe('functions build at publish', { timeout: 120_000 }, () => {
  const subdomain = subdomainOf();
  let first: { begin: any; finalize: any };

  it('bundles each .js and .ts file of functions/ (shared code, a package, built-ins external; types stripped)', async () => {
    first = await deployFunctions(fixtureSite(), { subdomain });
    expect(first.finalize.status, first.finalize.text).toBe(200);
    const projectId = first.begin.project_id;
    const deploymentId = first.begin.deployment_id;

    const detail = await platform.api('GET', `/api/v1/projects/${projectId}/deployments/${deploymentId}`, { token: m.member.token });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ id: deploymentId, status: 'ready', is_live: true, functions: ['hello', 'typed'] });
    expect(detail.body.data.build_log).toEqual([
      expect.stringMatching(/^\[functions\] Built hello \(\d+\.\d KB\)$/),
      expect.stringMatching(/^\[functions\] Built typed \(\d+\.\d KB\)$/),
    ]);

    const hello = await resolveFunctionByHostname(host('hello', subdomain).toUpperCase());
    expect(hello).toMatchObject({
      name: 'hello',
      project_id: projectId,
      team_id: m.team.id,
      deployment_id: deploymentId,
      entry_path: 'functions/hello.js',
      subdomain,
      url: `http://hello-${subdomain}.fn.localhost:${platform.port}/`,
      bundle_key: `functions/${m.team.id}/${projectId}/${deploymentId}/hello.mjs`,
    });
    const code = await bundleText(hello!.bundle_key);
    expect(hello!.bundle_bytes).toBe(Buffer.byteLength(code));
    // Built-ins stay imports; the CommonJS package's require('os') goes through the banner's createRequire.
    expect(code.startsWith("import {createRequire} from 'node:module'; const require = createRequire(import.meta.url);")).toBe(true);
    expect(await (await runBundle(hello!.bundle_key)).text()).toBe('HELLO FROM STRING!');

    const typed = await resolveFunctionByHostname(host('typed', subdomain));
    expect(typed?.entry_path).toBe('functions/typed.ts');
    expect(await bundleText(typed!.bundle_key)).toMatch(/from\s*"node:crypto"/);
    expect(await (await runBundle(typed!.bundle_key)).json()).toEqual({
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      shout: 'TYPED!',
      wrong: 'not a number',
    });
    // The shared-code directory and other files are no functions.
    expect(await resolveFunctionByHostname(host('lib', subdomain))).toBeNull();
    expect(await resolveFunctionByHostname(host('readme', subdomain))).toBeNull();
    expect(await resolveFunctionByHostname(`hello-${subdomain}.localhost:${platform.port}`)).toBeNull();
    expect(await resolveFunctionByHostname(`hello-nobody-${randomBytes(3).toString('hex')}.fn.localhost`)).toBeNull();
  });

  it('never serves function sources or the packages sent for them', async () => {
    const get = (path: string) => siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, path);
    expect((await get('/')).status).toBe(200);
    for (const path of [
      '/functions/hello.js',
      '/functions/typed.ts',
      '/functions/lib/shout.ts',
      '/functions/README.md',
      '/node_modules/tiny-greeting/index.js',
      '/node_modules/tiny-greeting/package.json',
    ]) {
      const reply = await get(path);
      expect(reply.status, path).toBe(404);
      expect(reply.text).not.toContain('toUpperCase');
    }
  });

  const failures: [string, Record<string, string | Buffer | null>, (log: string[]) => void][] = [
    [
      'an invalid function name',
      { 'functions/Bad_Name.js': 'export default () => new Response("x")' },
      (log) => {
        expect(log[0]).toBe('[functions] Build failed: invalid function name');
        expect(log.slice(1).join('\n')).toContain('functions/Bad_Name.js');
      },
    ],
    [
      'a .js and a .ts file sharing one name',
      { 'functions/hello.ts': 'export default () => new Response("ts")' },
      (log) => {
        expect(log).toContain('[functions] Build failed: invalid function name');
        expect(log.join('\n')).toContain('functions/hello.js and functions/hello.ts');
      },
    ],
    [
      'a bundle over 900 KB',
      {
        'functions/big.js': "import data from './lib/data.js';\nexport default () => new Response(data.slice(0, 10));\n",
        'functions/lib/data.js': `export default ${JSON.stringify(randomBytes(720 * 1024).toString('base64'))};\n`,
      },
      (log) => {
        const line = log.find((l) => l.startsWith('[functions] Build failed: big bundles to'));
        expect(line, log.join('\n')).toMatch(/over the 900\.0 KB limit/);
        expect(log[log.indexOf(line!) + 1]).toMatch(/^\[functions\] {3}functions\/lib\/data\.js: \d+\.\d (KB|MB)$/);
      },
    ],
    [
      'a hostname label over 63 characters',
      { [`functions/${'x'.repeat(60)}.js`]: 'export default () => new Response("long")' },
      (log) =>
        expect(log.join('\n')).toMatch(
          new RegExp(`^\\[functions\\] Build failed: hostname label x{60}-${subdomain} is \\d+ characters`, 'm'),
        ),
    ],
    [
      'an esbuild error',
      { 'functions/broken.ts': "import missing from './nowhere.js';\nexport default missing;\n" },
      (log) => {
        expect(log[0]).toBe('[functions] Build failed: functions/broken.ts could not be bundled');
        expect(log[1]).toMatch(/^\[functions\] {3}functions\/broken\.ts:1:\d+: Could not resolve "\.\/nowhere\.js"$/);
      },
    ],
  ];

  for (const [what, changes, check] of failures) {
    it(`fails the build for ${what}: nothing published, the session closed, production unchanged`, async () => {
      const projectId = first.begin.project_id;
      const { begin, finalize } = await deployFunctions(fixtureSite(changes), { projectId });
      expectError(finalize, 422, 'FUNCTIONS_BUILD_FAILED');
      const log = finalize.body.details.build_log as string[];
      expect(log.every((line) => line.startsWith('[functions]'))).toBe(true);
      check(log);

      // The same answer again; the session is closed and its team slot released.
      const again = await platform.api('POST', `/api/v1/uploads/${begin.upload_id}/finalize`, { token: m.member.token });
      expectError(again, 422, 'FUNCTIONS_BUILD_FAILED');
      expect(again.body.details.build_log).toEqual(log);
      const put = await platform.api('PUT', `/api/v1/uploads/${begin.upload_id}/files/${'0'.repeat(64)}`, {
        token: m.member.token,
        rawBody: 'x',
        headers: { 'content-type': 'application/octet-stream' },
      });
      expectError(put, 409, 'UPLOAD_SESSION_FINALIZED');
      const slots = await dynamo().send(
        new GetCommand({ TableName: config.tableName(), Key: keys.teamUploadSlots(m.team.id), ConsistentRead: true }),
      );
      expect(Object.keys(slots.Item?.slots ?? {})).not.toContain(begin.upload_id);

      const detail = await platform.api('GET', `/api/v1/projects/${projectId}/deployments/${begin.deployment_id}`, {
        token: m.member.token,
      });
      expect(detail.body.data).toMatchObject({ status: 'failed', is_live: false, build_log: log, functions: [] });
      const project = await platform.api('GET', `/api/v1/projects/${projectId}`, { token: m.member.token });
      expect(project.body.data.live_deployment_id).toBe(first.begin.deployment_id);
      expect((await resolveFunctionByHostname(host('hello', subdomain)))?.deployment_id).toBe(first.begin.deployment_id);
      // A failed deployment cannot be promoted.
      const promote = await platform.api('POST', `/api/v1/projects/${projectId}/promote`, {
        token: m.member.token,
        body: { deployment_id: begin.deployment_id },
      });
      expectError(promote, 400, 'DEPLOYMENT_NOT_READY');
    });
  }

  it('a hostname another project holds fails the build with a line saying so', async () => {
    // Project "{x}-{y}" with function "a" and project "{y}" with function "a-{x}"... the same label: first wins.
    const tail = randomBytes(3).toString('hex');
    const holder = `fb-${tail}`;
    const ok = await deployFunctions(site({ 'index.html': '<p>1</p>', 'functions/a-x.js': 'export default () => new Response("1")' }), {
      subdomain: `x-${holder}`,
    });
    expect(ok.finalize.status, ok.finalize.text).toBe(200);
    const clash = await deployFunctions(
      site({ 'index.html': '<p>2</p>', 'functions/a-x-x.js': 'export default () => new Response("2")' }),
      { subdomain: holder },
    );
    expectError(clash.finalize, 422, 'FUNCTIONS_BUILD_FAILED');
    expect(clash.finalize.body.details.build_log).toEqual([
      `[functions] Build failed: hostname a-x-x-${holder}.fn.localhost is held by another project; rename the function`,
    ]);
    expect((await resolveFunctionByHostname(`a-x-x-${holder}.fn.localhost`))?.project_id).toBe(ok.begin.project_id);
  });

  it('deleting a function file removes it; promoting the earlier deployment brings it back, unbuilt', async () => {
    const projectId = first.begin.project_id;
    const second = await deployFunctions(
      fixtureSite({ 'functions/hello.js': null, 'functions/bye.ts': 'export default () => new Response("bye")' }),
      { projectId },
    );
    expect(second.finalize.status, second.finalize.text).toBe(200);
    const list = async () =>
      (await platform.api('GET', `/api/v1/projects/${projectId}/functions`, { token: m.member.token })).body.data.functions;
    expect(await resolveFunctionByHostname(host('hello', subdomain))).toBeNull();
    expect((await resolveFunctionByHostname(host('bye', subdomain)))?.deployment_id).toBe(second.begin.deployment_id);
    expect((await list()).map((f: any) => f.name)).toEqual(['bye', 'typed']);
    const typedBefore = await resolveFunctionByHostname(host('typed', subdomain));

    const promote = await platform.api('POST', `/api/v1/projects/${projectId}/promote`, {
      token: m.member.token,
      body: { deployment_id: first.begin.deployment_id },
    });
    expect(promote.status).toBe(200);
    const hello = await resolveFunctionByHostname(host('hello', subdomain));
    expect(hello?.deployment_id).toBe(first.begin.deployment_id);
    expect(await resolveFunctionByHostname(host('bye', subdomain))).toBeNull();
    const functions = await list();
    expect(functions).toEqual([
      {
        id: hello!.function_id,
        name: 'hello',
        url: `http://hello-${subdomain}.fn.localhost:${platform.port}/`,
        deployment_id: first.begin.deployment_id,
        entry_path: 'functions/hello.js',
        bundle_bytes: hello!.bundle_bytes,
        created_at: hello!.created_at,
        // Not a scheduled function (docs/functions.md, Scheduled functions).
        schedule: null,
        next_run_at: null,
        skipped_runs: 0,
      },
      expect.objectContaining({ name: 'typed', deployment_id: first.begin.deployment_id }),
    ]);
    // A function's id is stable across deployments of the project.
    expect(functions[1].id).toBe(typedBefore!.function_id);
  });

  it('a finalize cut short by its budget (PUBLISH_IN_PROGRESS) builds in the next call, once', async () => {
    // A second project with the same files copies them from the first one's folder; a tiny budget stops after the copies.
    process.env.FINALIZE_BUDGET_MS = '1';
    try {
      const { begin, finalize } = await deployFunctions(fixtureSite(), { subdomain: subdomainOf() });
      expect(begin.missing).toEqual([]);
      expectError(finalize, 503, 'PUBLISH_IN_PROGRESS');
      const next = await platform.api('POST', `/api/v1/uploads/${begin.upload_id}/finalize`, { token: m.member.token });
      expect(next.status, next.text).toBe(200);
      const built = await resolveFunctionByHostname(host('hello', begin.project.subdomain));
      expect(built?.deployment_id).toBe(begin.deployment_id);
      const again = await platform.api('POST', `/api/v1/uploads/${begin.upload_id}/finalize`, { token: m.member.token });
      expect(again.body.data).toEqual(next.body.data);
      expect((await resolveFunctionByHostname(host('hello', begin.project.subdomain)))?.created_at).toBe(built!.created_at);
    } finally {
      delete process.env.FINALIZE_BUDGET_MS;
    }
  });

  it("looks for functions/ inside the project's root directory when one is set", async () => {
    const sub = subdomainOf();
    const s = site({
      'index.html': `<p>${sub}</p>`,
      'app/functions/inside.js': 'export default () => new Response("inside")',
      'app/functions/lib/util.js': 'export const x = 1;',
      // Outside the root directory, functions/ is an ordinary folder of the site.
      'functions/Not_A_Function.js': 'console.log(1)',
    });
    const begin = await platform.api('POST', '/api/v1/uploads', {
      token: m.owner.token,
      body: { files: s.files, project: { name: sub, subdomain: sub } },
    });
    expect(begin.status).toBe(201);
    const patch = await platform.api('PATCH', `/api/v1/projects/${begin.body.data.project_id}`, {
      token: m.owner.token,
      body: { root_directory: 'app' },
    });
    expect(patch.status, patch.text).toBe(200);
    await putMissing(platform, m.owner.token, begin.body.data.upload_id, begin.body.data.missing, s);
    const fin = await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token: m.owner.token });
    expect(fin.status, fin.text).toBe(200);
    expect((await resolveFunctionByHostname(host('inside', sub)))?.entry_path).toBe('app/functions/inside.js');
    const get = (path: string) => siteRequest(platform.port, `${sub}.localhost:${platform.port}`, path);
    expect((await get('/app/functions/inside.js')).status).toBe(404);
    expect((await get('/functions/Not_A_Function.js')).status).toBe(200);
  });

  it('a deployment without functions/ builds nothing, and its log is empty', async () => {
    const sub = subdomainOf();
    const plain = await deployFunctions(site({ 'index.html': `<p>${sub}</p>`, 'node_modules/kit/kit.css': 'b{}' }), { subdomain: sub });
    expect(plain.finalize.status).toBe(200);
    // Without functions, node_modules/ is an ordinary folder of the site.
    expect((await siteRequest(platform.port, `${sub}.localhost:${platform.port}`, '/node_modules/kit/kit.css')).status).toBe(200);
    const detail = await platform.api('GET', `/api/v1/projects/${plain.begin.project_id}/deployments/${plain.begin.deployment_id}`, {
      token: m.member.token,
    });
    expect(detail.body.data).toMatchObject({ status: 'ready', build_log: [], functions: [] });
    expect(
      (await platform.api('GET', `/api/v1/projects/${plain.begin.project_id}/functions`, { token: m.member.token })).body.data,
    ).toEqual({ functions: [], functions_beta_enrolled: false });
  });
});

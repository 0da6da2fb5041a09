import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3 } from '../../lib/aws/s3.ts';
import { config } from '../../lib/config.ts';
import { cliEntry, freshConfigHome, runCli } from '../support/cli.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { sha256, siteRequest } from '../support/sites.ts';

/**
 * The deploy CLI as a user runs it (a child process) against the local
 * platform, and the result served over HTTP on {subdomain}.localhost:PORT.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let env: Record<string, string>;
let site: string;
const subdomain = `cli-${randomBytes(4).toString('hex')}`;
const logo = randomBytes(40_000);

function writeSite(dir: string, files: Record<string, string | Buffer>) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  env = { SLIPWAY_API_URL: platform.baseUrl, SLIPWAY_TOKEN: m.apiKey.token, XDG_CONFIG_HOME: freshConfigHome() };
  site = mkdtempSync(join(tmpdir(), 'slipway-deploy-'));
  writeSite(site, {
    'index.html': '<h1>Home v1</h1>',
    'about.html': '<h1>About v1</h1>',
    'docs/index.html': '<h1>Docs</h1>',
    'css/site.css': 'body { margin: 0 }',
    'img/logo.png': logo,
    // Same bytes as img/logo.png: one upload serves both paths.
    'img/copy-of-logo.png': logo,
    // An empty file is a file too.
    'robots.txt': '',
    // Never deployed:
    '.git/config': '[core]',
    'node_modules/pkg/index.js': 'module.exports = 1',
    '.DS_Store': 'junk',
    'img/.DS_Store': 'junk',
  });
});
afterAll(() => platform?.stop());

const get = (path: string, options: { method?: string; headers?: Record<string, string> } = {}) =>
  siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, path, options);

describe('slipway deploy, redeploy, projects, rollback', () => {
  let first: any;
  let second: any;

  it('deploys a folder as a new project and prints the site URL', async () => {
    const run = await runCli(['deploy', site, '--subdomain', subdomain, '--json'], env);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stderr + run.code).toMatch(/0$/);
    first = JSON.parse(run.stdout);
    expect(first).toEqual({
      project_id: expect.any(String),
      deployment_id: expect.any(String),
      upload_id: expect.any(String),
      url: `http://${subdomain}.localhost:${platform.port}`,
      files_total: 7,
      bytes_total: 16 + 17 + 13 + 18 + 2 * logo.length,
      // A first deploy of the folder: no cached hashes, every file read.
      files_hashed: 7,
      // Two paths share the logo's bytes: sent once.
      files_sent: 6,
      bytes_sent: 16 + 17 + 13 + 18 + logo.length,
      known_count: 0,
      timings_ms: { hash: expect.any(Number), begin: expect.any(Number), upload: expect.any(Number), finalize: expect.any(Number) },
      // A site without functions/ has none.
      functions: [],
    });
    // Not a terminal: plain progress lines on stderr.
    expect(run.stderr).toContain('Uploading 6 files');
  });

  it('serves what was deployed, and nothing that was skipped', async () => {
    expect((await get('/')).text).toBe('<h1>Home v1</h1>');
    expect((await get('/about')).text).toBe('<h1>About v1</h1>');
    expect((await get('/docs/')).text).toBe('<h1>Docs</h1>');
    const robots = await get('/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.body.length).toBe(0);
    const css = await get('/css/site.css');
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    const png = await get('/img/copy-of-logo.png');
    expect(png.status).toBe(200);
    expect(png.body.equals(logo)).toBe(true);
    expect(png.headers.etag).toBe(`"${sha256(logo)}"`);
    for (const path of ['/.git/config', '/node_modules/pkg/index.js', '/.DS_Store', '/img/.DS_Store']) {
      expect((await get(path)).status).toBe(404);
    }
  });

  it('a redeploy after changing one file sends that one file only, to the same project', async () => {
    writeFileSync(join(site, 'about.html'), '<h1>About v2!</h1>');
    const run = await runCli(['deploy', site, '--json'], env);
    expect(run.code).toBe(0);
    second = JSON.parse(run.stdout);
    expect(second.project_id).toBe(first.project_id);
    expect(second.deployment_id).not.toBe(first.deployment_id);
    expect(second).toMatchObject({ files_total: 7, files_sent: 1, bytes_sent: 18, known_count: 5 });
    expect((await get('/about')).text).toBe('<h1>About v2!</h1>');
    expect((await get('/')).text).toBe('<h1>Home v1</h1>');
    expect((await get('/img/logo.png')).body.equals(logo)).toBe(true);
    // Unchanged files are served from the first deployment's folder: the second copied one object.
    const project = (await platform.api('GET', `/api/v1/projects/${first.project_id}`, { token: m.apiKey.token })).body.data;
    const listed = await s3().send(
      new ListObjectsV2Command({ Bucket: config.bucket('sites'), Prefix: `${m.team.id}/${project.slug}/${second.deployment_id}/` }),
    );
    expect((listed.Contents ?? []).map((o) => o.Key!.split('/').slice(3).join('/'))).toEqual(['about.html']);
  });

  it('projects lists the project with its live deployment', async () => {
    const run = await runCli(['projects', '--json'], env);
    expect(run.code).toBe(0);
    const projects = JSON.parse(run.stdout);
    expect(projects).toContainEqual(expect.objectContaining({ id: first.project_id, subdomain, live_deployment_id: second.deployment_id }));
    const table = await runCli(['projects'], env);
    expect(table.stdout).toContain(first.project_id);
    expect(table.stdout).toContain(`http://${subdomain}.localhost:${platform.port}`);
  });

  it('rollback points production at the deployment before the live one, and --to goes anywhere', async () => {
    const back = await runCli(['rollback', '--project', first.project_id, '--json'], env);
    expect(back.code).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ id: first.project_id, live_deployment_id: first.deployment_id });
    expect((await get('/about')).text).toBe('<h1>About v1</h1>');

    const none = await runCli(['rollback', '--project', first.project_id], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('slipway: There is no deployment before the live one to roll back to.\n');

    const forward = await runCli(['rollback', '--project', first.project_id, '--to', second.deployment_id], env);
    expect(forward.code).toBe(0);
    expect(forward.stdout).toContain(`now serves deployment ${second.deployment_id}`);
    expect((await get('/about')).text).toBe('<h1>About v2!</h1>');
  });

  it('rollback in the deployed folder finds its project without --project', async () => {
    const run = await runCli(['rollback', '--json'], env, { cwd: site });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).live_deployment_id).toBe(first.deployment_id);
  });
});

describe('progress on a terminal', () => {
  /** Deploys a fresh 3-file folder with the CLI on a pseudo-terminal (`script`), as in a user's shell. */
  async function deployOnTerminal(extraEnv: Record<string, string>): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-tty-'));
    writeSite(dir, { 'index.html': `<h1>${randomBytes(4).toString('hex')}</h1>`, 'a.bin': randomBytes(5000), 'b.bin': randomBytes(7000) });
    const command = [process.execPath, cliEntry(), 'deploy', dir, '--name', `tty ${randomBytes(3).toString('hex')}`]
      .map((part) => `'${part}'`)
      .join(' ');
    return new Promise<string>((resolve, reject) => {
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        // A user's shell: the CI runner's CI=true (and any NO_COLOR) is not part of it; the second case sets them itself.
        env: { ...process.env, ...env, TERM: 'xterm', CI: '', NO_COLOR: '', ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (c: Buffer) => (text += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}: ${text}`))));
    });
  }

  it('shows a bar with files and megabytes when stderr and stdout are a TTY', async () => {
    const output = await deployOnTerminal({});
    expect(output).toMatch(/Uploading \[[^\]]*\] 100% \| 3\/3 files \| 0\.0 MB\/0\.0 MB/);
    expect(output).not.toContain('Uploading 3 files');
    expect(output).toMatch(/Deployment [0-9a-f-]{36} is live:\s+http:\/\/tty-[0-9a-f]{6}\.localhost:\d+/);
  });

  it('prints plain lines instead, even on a terminal, when CI or NO_COLOR is set', async () => {
    for (const extra of [{ CI: 'true' }, { NO_COLOR: '1' }] as Record<string, string>[]) {
      const output = await deployOnTerminal(extra);
      expect(output).toContain('Uploading 3 files');
      expect(output).not.toMatch(/Uploading \[/);
    }
  });
});

describe('slipway errors', () => {
  it('an API refusal is its sentence and code, then its details in words, exit 1, no stack', async () => {
    const run = await runCli(['deploy', site, '--name', 'Bad', '--subdomain', 'Not_Valid!'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^(Hashing [^\n]*\n)?slipway: [^\n]+ \(SUBDOMAIN_INVALID\)\n {2}Try instead: [a-z0-9-]+(, [a-z0-9-]+)*\n$/);
  });

  it('an unknown token is 401 UNAUTHENTICATED', async () => {
    const run = await runCli(['projects'], { ...env, SLIPWAY_TOKEN: 'slw_k_nope' });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('slipway: Missing or invalid credentials. (UNAUTHENTICATED)\n');
  });

  it('a missing folder and a not-logged-in user are told so', async () => {
    const missing = await runCli(['deploy', join(site, 'nope')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`slipway: ${join(site, 'nope')} does not exist.\n`);
    const anonymous = await runCli(['projects'], { SLIPWAY_API_URL: platform.baseUrl, XDG_CONFIG_HOME: freshConfigHome() });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toBe('slipway: Not logged in: run `slipway login` or set SLIPWAY_TOKEN.\n');
  });
});

describe('slipway login', () => {
  it('stores the token and API URL with mode 0600, then commands use them', async () => {
    const home = freshConfigHome();
    const run = await runCli(['login', '--api-url', platform.baseUrl], { XDG_CONFIG_HOME: home }, { input: `${m.owner.token}\n` });
    expect(run.code).toBe(0);
    const file = join(home, 'slipway', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ api_url: platform.baseUrl, token: m.owner.token });
    const projects = await runCli(['projects', '--json'], { XDG_CONFIG_HOME: home });
    expect(projects.code).toBe(0);
    expect(JSON.parse(projects.stdout).map((p: { subdomain: string }) => p.subdomain)).toContain(subdomain);
  });

  it('with no API URL set anywhere, uses the running local platform (its state file)', async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), 'slipway-state-')), 'local.json');
    writeFileSync(stateFile, JSON.stringify({ pid: process.pid, baseUrl: platform.baseUrl, env: {} }));
    const run = await runCli(['projects', '--json'], {
      SLIPWAY_TOKEN: m.apiKey.token,
      XDG_CONFIG_HOME: freshConfigHome(),
      SLIPWAY_STATE_FILE: stateFile,
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).map((p: { subdomain: string }) => p.subdomain)).toContain(subdomain);
  });

  it('refuses a token the API does not accept, storing nothing', async () => {
    const home = freshConfigHome();
    const run = await runCli(['login', '--api-url', platform.baseUrl, '--token', 'slw_s_bad'], { XDG_CONFIG_HOME: home });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `Using the API at ${platform.baseUrl} (from --api-url).\n` +
        `slipway: The API at ${platform.baseUrl} refused this token: Missing or invalid credentials. (UNAUTHENTICATED)\n`,
    );
    expect(() => statSync(join(home, 'slipway', 'config.json'))).toThrow();
  });
});

describe('slipway deploy with _redirects and _headers', () => {
  it('prints each skipped line as a warning, and the site serves the rules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-deploy-rules-'));
    const rulesSubdomain = `rules-${randomBytes(4).toString('hex')}`;
    writeSite(dir, {
      'index.html': '<div id="root"></div>',
      _redirects: '/* /index.html 200\n/old /new 418\n',
      _headers: '/*\n  X-Frame-Options: DENY\n  Content-Length: 1\n',
    });
    const run = await runCli(['deploy', dir, '--subdomain', rulesSubdomain], env);
    expect(run.stderr + run.code).toMatch(/0$/);
    expect(run.stderr).toContain(
      'Warning: _redirects line 2 skipped: 418 is not a status of a rule (200, 301, 302, 303, 307, 308 or 404, with an optional !)\n',
    );
    expect(run.stderr).toContain('Warning: _headers line 3 skipped: Content-Length is set by the platform and cannot be set here\n');
    const spa = await siteRequest(platform.port, `${rulesSubdomain}.localhost:${platform.port}`, '/settings/profile');
    expect(spa.status).toBe(200);
    expect(spa.text).toBe('<div id="root"></div>');
    expect(spa.headers['x-frame-options']).toBe('DENY');
  });
});

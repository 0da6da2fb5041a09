import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';
import { RACY_MARGIN_MS } from '../../lib/cli/hash-cache.ts';
import { freshConfigHome, runProgram, type CliRun } from '../support/cli.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { doorRequest } from '../support/door.ts';
import { siteRequest } from '../support/sites.ts';

/**
 * The installed CLI: package.json's `bin` (dist/cli.mjs, built by bin/build-cli.mjs as `prepare` does),
 * executed as a program from a site's folder outside the repository, against the local platform.
 * Exit codes, --help on every command, --json output, and the per-folder hash cache.
 */
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin: Record<string, string> };
const bin = join(repoRoot, pkg.bin.slipway!);

let platform: TestPlatform;
let env: Record<string, string>;
let site: string;
/** When the set-up had written the site's files. */
let written: number;
const subdomain = `bin-${randomBytes(4).toString('hex')}`;

function runBin(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  // The bin itself, by its shebang: no tsx, no `node` in front, a folder with no node_modules as cwd.
  return runProgram(bin, args, { ...env, ...options.env }, { cwd: options.cwd ?? site });
}

beforeAll(async () => {
  execFileSync(process.execPath, [join(repoRoot, 'bin', 'build-cli.mjs')], { stdio: 'inherit' });
  platform = await startTestPlatform();
  const m = await makeTeamWithRoles();
  env = {
    SLIPWAY_API_URL: platform.baseUrl,
    SLIPWAY_TOKEN: m.apiKey.token,
    XDG_CONFIG_HOME: freshConfigHome(),
    XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), 'slipway-cache-')),
  };
  site = mkdtempSync(join(tmpdir(), 'slipway-bin-site-'));
  mkdirSync(join(site, 'css'));
  writeFileSync(join(site, 'index.html'), '<h1>Bin v1</h1>');
  writeFileSync(join(site, 'css', 'site.css'), 'body { margin: 0 }');
  writeFileSync(join(site, 'about.html'), '<h1>About AAA</h1>');
  for (let i = 0; i < 20; i++) writeFileSync(join(site, `page-${i}.html`), `<p>${i}</p>`);
  written = Date.now();
});
afterAll(() => platform?.stop());

describe('the slipway bin', () => {
  it('is an executable file with a node shebang', () => {
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('--help on every command and `slipway help` exit 0; no command, an unknown one or a bad flag exit 2', async () => {
    const help = await runBin(['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: slipway <command>');
    expect(help.stdout).toContain('Exit codes: 0 success, 1 the operation failed, 2 usage error');
    for (const command of ['deploy', 'rollback', 'projects', 'login', 'functions', 'invoke', 'logs', 'admin']) {
      // The three forms of one command at once: 24 CLI starts one after another passed 30 s on a loaded machine.
      const forms = [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
      ];
      const runs = await Promise.all(forms.map((args) => runBin(args)));
      runs.forEach((run, i) => {
        const args = forms[i]!;
        expect(`${args.join(' ')}: ${run.code}`).toBe(`${args.join(' ')}: 0`);
        expect(run.stdout).toMatch(new RegExp(`^Usage:\\n?\\s*(slipway )?${command}`));
      });
    }
    expect((await runBin([])).code).toBe(2);
    const unknown = await runBin(['bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown command bogus');
    const badFlag = await runBin(['deploy', '--bogus', '--json']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('--bogus');
    expect(badFlag.stdout).toBe('');
    const noProject = await runBin(['rollback'], { cwd: tmpdir() });
    expect(noProject.code).toBe(2);
  }, 60_000);

  let first: any;

  it('deploys the current folder with --json: stdout is the summary, stderr plain lines (no bar, not a terminal)', async () => {
    // Older than the racy margin before this deploy scans: the cache may trust their stat facts. The tests before
    // this one took part of that wait (the files last changed when the set-up wrote them).
    await new Promise((r) => setTimeout(r, Math.max(0, written + RACY_MARGIN_MS + 200 - Date.now())));
    const run = await runBin(['deploy', '--subdomain', subdomain, '--json']);
    expect(run.stderr + run.code).toMatch(/0$/);
    first = JSON.parse(run.stdout);
    expect(first).toMatchObject({
      files_total: 23,
      files_hashed: 23,
      files_sent: 23,
      url: `http://${subdomain}.localhost:${platform.port}`,
    });
    expect(run.stderr).toContain('Uploading 23 files');
    expect(run.stderr).not.toMatch(/\r|\x1b\[/);
    expect((await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/')).text).toBe('<h1>Bin v1</h1>');
  });

  it('projects --json lists it; a refused token exits 1, stdout empty, the reason on stderr', async () => {
    const run = await runBin(['projects', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toContainEqual(expect.objectContaining({ id: first.project_id, subdomain }));
    const refused = await runBin(['projects', '--json'], { env: { SLIPWAY_TOKEN: 'not-a-token' } });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^slipway: .+ \(UNAUTHENTICATED\)\n$/);
  });

  it('a repeat deploy reads no unchanged file; an edit that keeps size and mtime is still read and sent', async () => {
    const again = await runBin(['deploy', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ project_id: first.project_id, files_total: 23, files_hashed: 0, files_sent: 0 });

    // Same size, and the mtime put back: only the ctime (and the bytes) tell.
    const about = join(site, 'about.html');
    const before = statSync(about, { bigint: true });
    // touch -r copies the timestamps to the nanosecond (utimes from JavaScript numbers loses the last digits).
    const reference = join(mkdtempSync(join(tmpdir(), 'slipway-ref-')), 'ref');
    execFileSync('touch', ['-r', about, reference]);
    writeFileSync(about, '<h1>About BBB</h1>');
    execFileSync('touch', ['-r', reference, about]);
    const after = statSync(about, { bigint: true });
    expect(after.size).toBe(before.size);
    expect(after.mtimeNs).toBe(before.mtimeNs);
    expect(after.ino).toBe(before.ino);
    const edited = await runBin(['deploy', '--json']);
    expect(edited.code).toBe(0);
    expect(JSON.parse(edited.stdout)).toMatchObject({ files_total: 23, files_hashed: 1, files_sent: 1 });
    expect((await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/about')).text).toBe('<h1>About BBB</h1>');

    // That file changed within the racy margin of the last scan: not trusted to the cache yet, read once more.
    const racy = await runBin(['deploy', '--json']);
    expect(JSON.parse(racy.stdout)).toMatchObject({ files_hashed: 1, files_sent: 0 });
  });
});

describe('the slipway bin: dev', () => {
  it('serves a folder and runs its function from outside the repository (the runner ships in dist/)', async () => {
    const app = mkdtempSync(join(tmpdir(), 'slipway-bin-dev-'));
    mkdirSync(join(app, 'functions'));
    writeFileSync(join(app, 'index.html'), '<h1>dev</h1>');
    writeFileSync(join(app, 'functions', 'hello.js'), "export default () => new Response('hello from the bin');\n");
    const child = spawn(bin, ['dev', '.', '--port', '0'], {
      cwd: app,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'ERROR' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    try {
      for (let i = 0; i < 300 && !/Ctrl-C stops/.test(output); i++) await new Promise((r) => setTimeout(r, 100));
      const port = Number(/Site: +http:\/\/[^:]+:(\d+)\//.exec(output)?.[1]);
      expect(port, output).toBeGreaterThan(0);
      const name = /Function hello: +http:\/\/([^/]+)\//.exec(output)?.[1];
      expect(name, output).toBeDefined();
      const reply = await doorRequest(port, name!, '/');
      expect(reply.text, output).toBe('hello from the bin');
      expect(reply.status).toBe(200);
    } finally {
      child.kill('SIGINT');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    }
  }, 60_000);
});

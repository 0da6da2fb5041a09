import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/local/api-server.ts';
import { runProgram } from '../support/cli.ts';

/**
 * The package as `npm pack` makes it, installed beside its dependencies (links to this repository's, with
 * no pinned Node among them, as in a user's node_modules), run by the machine's own `node` (the first on
 * PATH outside node_modules: npm scripts and vitest put the pinned Node 22 first) and by Node 22.
 */
let work: string;
let bin: string;
let site: string;
let machineNode: string;
let machineVersion: string;

function firstNodeOutsideNodeModules(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || dir.includes('node_modules')) continue;
    try {
      accessSync(join(dir, 'node'), constants.X_OK);
      return join(dir, 'node');
    } catch {
      // not here
    }
  }
  throw new Error('No node on PATH outside node_modules');
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'slipway-packed-'));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as { filename: string }[];
  const modules = join(work, 'app', 'node_modules');
  mkdirSync(join(modules, 'slipway'), { recursive: true });
  execFileSync('tar', ['-xzf', join(work, packed!.filename), '-C', join(modules, 'slipway'), '--strip-components=1']);
  for (const name of readdirSync(join(repoRoot, 'node_modules')))
    if (!['.bin', 'node', 'slipway'].includes(name)) symlinkSync(join(repoRoot, 'node_modules', name), join(modules, name));
  bin = join(modules, 'slipway', 'dist', 'cli.mjs');
  site = join(work, 'site');
  mkdirSync(join(site, 'functions'), { recursive: true });
  writeFileSync(join(site, 'index.html'), '<h1>packed</h1>');
  writeFileSync(join(site, 'functions', 'hello.js'), 'export default () => new Response(`hi from Node ${process.versions.node}`);\n');
  machineNode = firstNodeOutsideNodeModules();
  machineVersion = execFileSync(machineNode, ['--version'], { encoding: 'utf8' }).trim();
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Starts `slipway dev` of the packed package on a node, calls its function once, stops it. */
async function devAnswers(node: string): Promise<{ status: number; body: string }> {
  const child = spawn(node, [bin, 'dev', site, '--port', '0'], { cwd: work, env: { PATH: process.env.PATH, HOME: work } });
  try {
    let out = '';
    const url = await new Promise<URL>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const found = /Function hello:\s+(\S+)/.exec(out);
        if (found) resolve(new URL(found[1]!));
      });
      child.on('exit', (code) => reject(new Error(`slipway dev exited (${code}): ${out}`)));
    });
    return await new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port: url.port, path: '/', headers: { host: url.host } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
        .on('error', reject)
        .end();
    });
  } finally {
    child.kill('SIGTERM');
  }
}

describe('the packed CLI on the Node it finds', { timeout: 90_000 }, () => {
  it("runs its commands on the machine's own node, and `dev` runs functions only on Node 22 or says in one line that it needs it", async () => {
    const help = await runProgram(machineNode, [bin, 'help'], {}, { cwd: work });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: slipway <command>');
    if (machineVersion.startsWith('v22.')) {
      expect(await devAnswers(machineNode)).toEqual({ status: 200, body: `hi from Node ${machineVersion.slice(1)}` });
      return;
    }
    const dev = await runProgram(machineNode, [bin, 'dev', site], {}, { cwd: work });
    expect(dev).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `slipway: slipway dev needs Node 22, the Node functions run on once deployed; this is Node ${machineVersion} (${machineNode}). ` +
        'Install Node 22 (nvm install 22) and run it with that node.\n',
    });
  });

  it('serves a function from `slipway dev` of the packed package on Node 22', async () => {
    expect(await devAnswers(process.execPath)).toEqual({ status: 200, body: `hi from Node ${process.versions.node}` });
  });
});

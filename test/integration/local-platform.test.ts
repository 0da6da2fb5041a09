import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/ports.ts';
import { repoRoot } from '../../lib/local/api-server.ts';
import { cliEntry } from '../support/cli.ts';

/** `npm run dev` and `npm run slipway -- admin ...`, run as a user runs them, as child processes. */
const tsx = (script: string) => [process.execPath, ['--import', 'tsx', script]] as const;
const stateDir = mkdtempSync(join(tmpdir(), 'slipway-dev-'));
const stateFile = join(stateDir, 'local.json');
const baseEnv = {
  ...process.env,
  SLIPWAY_STATE_FILE: stateFile,
  AWS_ENDPOINT_URL: '',
  // What npm run dev keeps across restarts, and its record for the CLI: not the checkout's nor the user's.
  SLIPWAY_LOCAL_STATE_DIR: join(stateDir, 'kept'),
  XDG_STATE_HOME: join(stateDir, 'xdg-state'),
};

/** The record of this checkout's platform (lib/local/state.ts), under the test's own XDG_STATE_HOME. */
function runningRecord(): string {
  const platforms = join(stateDir, 'xdg-state', 'slipway', 'platforms');
  const key = createHash('sha256').update(repoRoot).digest('hex').slice(0, 12);
  return join(platforms, `${basename(repoRoot)}-${key}.json`);
}

function startDev(env: Record<string, string | undefined>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const [cmd, args] = tsx('lib/local/dev.ts');
  const child = spawn(cmd, args, { cwd: repoRoot, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitFor(predicate: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function cli(...args: string[]): { code: number | null; json: any; stderr: string } {
  const result = spawnSync(process.execPath, [cliEntry(), ...args], { cwd: repoRoot, env: baseEnv, encoding: 'utf8' });
  let json: unknown = null;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    // not JSON
  }
  return { code: result.status, json, stderr: result.stderr };
}

describe('npm run dev and the operator commands', () => {
  let dev: ReturnType<typeof startDev>;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    dev = startDev({ PORT: String(port) });
    await waitFor(() => dev.output().includes('Press Ctrl-C to stop.'), 45_000);
  }, 60_000);

  afterAll(async () => {
    if (dev.child.exitCode === null) dev.child.kill('SIGKILL');
  });

  it('prints the base URL and how to create a first user', () => {
    expect(dev.output()).toContain(`API:           http://localhost:${port}/api/v1`);
    expect(dev.output()).toContain('npm run -s slipway -- admin create-user --email you@example.com --name You');
    expect(dev.output()).toMatch(/State: +started empty \(no saved state\)/);
    expect(existsSync(stateFile)).toBe(true);
    // The record the CLI finds it by from any folder.
    expect(existsSync(runningRecord())).toBe(true);
  });

  it('creates a user, team, member, API key and session that the API then accepts', async () => {
    const owner = cli('admin', 'create-user', '--email', 'owner@example.test', '--name', 'Olive');
    expect(owner.code).toBe(0);
    expect(owner.json).toMatchObject({
      user_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      session_token: expect.stringMatching(/^slw_s_/),
    });

    const team = cli('admin', 'create-team', '--name', 'Olive Co', '--owner', owner.json.user_id);
    expect(team.code).toBe(0);
    expect(team.json).toMatchObject({ team_id: expect.any(String), slug: 'olive-co' });

    const member = cli('admin', 'create-user', '--email', 'member@example.test');
    expect(cli('admin', 'add-member', '--team', 'olive-co', '--user', member.json.user_id, '--role', 'member').json).toEqual({
      team_id: team.json.team_id,
      user_id: member.json.user_id,
      role: 'member',
    });
    const key = cli('admin', 'create-api-key', '--team', team.json.team_id);
    expect(key.json.api_key).toMatch(/^slw_k_/);
    const session = cli('admin', 'create-session', '--user', member.json.user_id, '--team', team.json.team_id);
    expect(session.json.session_token).toMatch(/^slw_s_/);

    for (const token of [owner.json.session_token, key.json.api_key, session.json.session_token]) {
      const res = await fetch(`http://localhost:${port}/api/v1/team/profile`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).data.slug).toBe('olive-co');
    }
  });

  it('refuses bad operator input with a sentence, not a stack', () => {
    const dup = cli('admin', 'create-user', '--email', 'owner@example.test');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toBe('slipway: A user with e-mail owner@example.test exists\n');
    const badRole = cli('admin', 'add-member', '--team', 'olive-co', '--user', 'x', '--role', 'owner');
    expect(badRole.stderr).toBe('slipway: --role is admin or member (ownership moves by transfer)\n');
    const noTeam = cli('admin', 'create-api-key', '--team', 'no-such-team');
    expect(noTeam.stderr).toBe('slipway: No team no-such-team\n');
  });

  it('a second platform on the same port gets a clear message', async () => {
    const second = startDev({ PORT: String(port) });
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`slipway dev: Port ${port} is already in use.`);
    expect(second.output()).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('stops everything it started on Ctrl-C', async () => {
    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    expect(existsSync(stateFile)).toBe(false);
    expect(existsSync(runningRecord())).toBe(false);
    // What it held is kept for the next start.
    await waitFor(() => existsSync(join(stateDir, 'kept', 'moto.pickle')), 10_000);
    await expect(fetch(`http://localhost:${port}/api/v1/team/profile`)).rejects.toThrow();
    // With the platform gone, the operator CLI says so.
    const orphan = cli('admin', 'create-user', '--email', 'late@example.test');
    expect(orphan.code).toBe(1);
    expect(orphan.stderr).toContain('No running local platform found');
  }, 30_000);
});

describe('npm run dev without moto_server', () => {
  it('says how to install it instead of printing a stack', async () => {
    const nodeOnly = dirname(process.execPath);
    const dev = startDev({ PORT: String(await freePort()), PATH: nodeOnly });
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toContain('slipway dev: moto_server was not found on PATH. Install it with `pip install "moto[server]"`');
    expect(dev.output()).not.toMatch(/\n\s+at /);
  }, 30_000);
});

describe('freePort', () => {
  it('gives a port a server can bind', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    server.close();
  });
});

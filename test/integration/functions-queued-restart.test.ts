import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { INVOCATION_ERRORS } from '../../lib/functions/invocations.ts';
import { readLocalState } from '../../lib/local/state.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { makeTeamWithRoles, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Restart safety: `npm run dev` killed with SIGKILL while one invocation runs
 * and another waits in the queue, then started again on the same AWS endpoint
 * and prefix. The new platform reclaims both before it polls the queue: the
 * running one ends `timed_out` ("did not finish before its timeout"), the one
 * that never started ends `failed` ("never started").
 */
const dir = mkdtempSync(join(tmpdir(), 'slipway-restart-'));
const stateFile = join(dir, 'local.json');
const prefix = `r${randomBytes(5).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let child: ChildProcess | null = null;

function startDev(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const proc = spawn('npm', ['run', 'dev'], {
    cwd: process.cwd(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: '0',
      AWS_ENDPOINT_URL: inject('awsEndpoint'),
      SLIPWAY_PREFIX: prefix,
      SLIPWAY_STATE_FILE: stateFile,
      // One run at a time, so a second invocation waits in the queue.
      LOCAL_QUEUE_CONCURRENCY: '1',
      FUNCTIONS_QUEUED_RATE_PER_MINUTE: '100000',
    },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`npm run dev did not start: ${out}`)), 60_000);
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /API:\s+(http:\/\/localhost:\d+)\/api\/v1/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child: proc, baseUrl: match[1]! });
      }
    });
    proc.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.once('exit', (code) => reject(new Error(`npm run dev exited (${code}): ${out}`)));
  });
}

function killGroup(proc: ChildProcess, signal: NodeJS.Signals) {
  try {
    process.kill(-proc.pid!, signal);
  } catch {
    // Gone already.
  }
}

function apiOf(baseUrl: string): TestPlatform['api'] {
  return async (method, path, { token, body, rawBody, headers: extra = {} } = {}) => {
    const headers: Record<string, string> = { ...extra };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body !== undefined ? JSON.stringify(body) : rawBody });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON.
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

afterAll(async () => {
  if (child) killGroup(child, 'SIGINT');
  await sleep(1000);
  if (child) killGroup(child, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('restart safety', () => {
  it('SIGKILL mid-run, then a start on the same endpoint: the running invocation ends timed_out, the queued one failed, each with its restart sentence', async () => {
    const first = await startDev();
    child = first.child;
    // Talk to that platform's table and buckets from here.
    Object.assign(process.env, readLocalState(stateFile)!.env);
    const api = apiOf(first.baseUrl);
    const roles = await makeTeamWithRoles();
    await setFunctionsEnrolment(roles.team.id, true);
    const subdomain = `rs-${randomBytes(3).toString('hex')}`;
    await deploy(
      { api } as TestPlatform,
      roles.owner.token,
      site({ 'index.html': '<p>r</p>', 'functions/slow.js': `export default async () => { await new Promise((r) => setTimeout(r, 50_000)); return new Response('late'); };` }),
      { name: `Restart ${subdomain}`, subdomain },
    );
    const running = await api('POST', `/api/v1/public/functions/${subdomain}/slow`);
    expect(running.status).toBe(202);
    let status = 'pending';
    for (let i = 0; i < 100 && status !== 'running'; i++) {
      await sleep(100);
      status = (await api('GET', running.body.data.poll_url)).body.data.status;
    }
    expect(status).toBe('running');
    const queued = await api('POST', `/api/v1/public/functions/${subdomain}/slow`);
    expect(queued.status).toBe(202);
    await sleep(300);
    expect((await api('GET', queued.body.data.poll_url)).body.data.status).toBe('pending');

    killGroup(child, 'SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));

    const second = await startDev();
    child = second.child;
    const again = apiOf(second.baseUrl);
    const deadline = Date.now() + 20_000;
    let a: any;
    let b: any;
    for (;;) {
      a = (await again('GET', running.body.data.poll_url)).body.data;
      b = (await again('GET', queued.body.data.poll_url)).body.data;
      if ((a.status !== 'running' && b.status !== 'pending') || Date.now() > deadline) break;
      await sleep(200);
    }
    expect(a).toMatchObject({ status: 'timed_out', error_message: INVOCATION_ERRORS.reclaimedRunning });
    expect(b).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.reclaimedPending, started_at: null });
    // The queue still held the waiting one's message: the new platform received it and ran nothing.
    await sleep(500);
    expect((await again('GET', queued.body.data.poll_url)).body.data.status).toBe('failed');
  }, 150_000);
});

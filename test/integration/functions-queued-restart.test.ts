import type { ChildProcess } from 'node:child_process';
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
import { apiOf, signalGroup as killGroup, startDev as startDevWith } from '../support/dev-process.ts';

/**
 * Restart safety: `npm run dev` killed with SIGKILL while one invocation runs
 * and another waits in the queue, then started again on the same AWS endpoint
 * and prefix. The new platform reclaims the running one before it polls the
 * queue (`timed_out`, "did not finish before its timeout"); the one that waited
 * is handled after the start, and runs once.
 */
const dir = mkdtempSync(join(tmpdir(), 'slipway-restart-'));
const stateFile = join(dir, 'local.json');
const prefix = `r${randomBytes(5).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let child: ChildProcess | null = null;

const startDev = () =>
  startDevWith({
    AWS_ENDPOINT_URL: inject('awsEndpoint'),
    SLIPWAY_PREFIX: prefix,
    SLIPWAY_STATE_FILE: stateFile,
    // The kept secrets and the CLI's record of the running platform: in this test's folder, not the checkout's or the user's.
    SLIPWAY_LOCAL_STATE_DIR: join(dir, 'state'),
    XDG_STATE_HOME: join(dir, 'xdg-state'),
    // One run at a time, so a second invocation waits in the queue.
    LOCAL_QUEUE_CONCURRENCY: '1',
    FUNCTIONS_QUEUED_RATE_PER_MINUTE: '100000',
  });

afterAll(async () => {
  if (child) killGroup(child, 'SIGINT');
  await sleep(1000);
  if (child) killGroup(child, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('restart safety', () => {
  it('SIGKILL mid-run, then a start on the same endpoint: the running invocation ends timed_out with its restart sentence, the queued one runs', async () => {
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
      site({
        'index.html': '<p>r</p>',
        'functions/slow.js': `export default async () => { await new Promise((r) => setTimeout(r, 50_000)); return new Response('late'); };`,
      }),
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
    // Its message was still on the queue and the start queued it again: it runs, once.
    expect(b.status).toBe('running');
    expect(b.started_at).not.toBeNull();
    await sleep(1000);
    expect((await again('GET', queued.body.data.poll_url)).body.data).toMatchObject({ status: 'running', started_at: b.started_at });
  }, 150_000);
});

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { decryptEnvValue } from '../../lib/env/encryption.ts';
import { INVOCATION_ERRORS } from '../../lib/functions/invocations.ts';
import { readLocalState } from '../../lib/local/state.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { apiOf, interrupt, signalGroup, startDev, type DevProcess } from '../support/dev-process.ts';
import { doorRequest, functionHostname } from '../support/door.ts';
import { makeTeamWithRoles, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Nothing lost on restart (issue 21): `npm run dev` with the moto_server it
 * starts itself, stopped with Ctrl-C and started again, keeps users, teams,
 * tokens, published sites, functions, a pending invocation (it runs after the
 * start), a schedule that fell due while it was stopped (handled after the
 * start) and stored secrets; `--fresh` starts empty.
 */
const dir = mkdtempSync(join(tmpdir(), 'slipway-keep-'));
const stateFile = join(dir, 'local.json');
const env = {
  SLIPWAY_STATE_FILE: stateFile,
  SLIPWAY_LOCAL_STATE_DIR: join(dir, 'state'),
  XDG_STATE_HOME: join(dir, 'xdg-state'),
  SLIPWAY_PREFIX: `k${randomBytes(4).toString('hex')}`,
  // Its own moto_server, the one whose state is kept: not the run's shared endpoint.
  AWS_ENDPOINT_URL: '',
  LOCAL_QUEUE_CONCURRENCY: '1',
  FUNCTIONS_QUEUED_RATE_PER_MINUTE: '100000',
  // A provisional project expires while the platform is stopped.
  PROVISIONAL_EXPIRY_SECONDS: '3',
  SCREENSHOT_CAPTURE: 'off',
  LOG_LEVEL: 'ERROR',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let running: ChildProcess | null = null;

async function start(args: string[] = []): Promise<DevProcess> {
  const dev = await startDev(env, args);
  running = dev.child;
  // Talk to this platform's table and buckets from here too.
  Object.assign(process.env, readLocalState(stateFile)!.env);
  return dev;
}

async function stop(dev: DevProcess): Promise<void> {
  expect(await interrupt(dev.child), dev.log()).toBe(true);
  running = null;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(200);
  }
}

afterAll(async () => {
  if (running) signalGroup(running, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run dev keeps its state across a stop and a start', () => {
  it('a user, team, token, site, function, pending invocation, due schedule and stored secret survive Ctrl-C; --fresh starts empty', async () => {
    const first = await start();
    expect(first.output).toMatch(/State: +started empty \(no saved state\)/);
    const api = apiOf(first.baseUrl);
    const m = await makeTeamWithRoles();
    await setFunctionsEnrolment(m.team.id, true);
    const subdomain = `keep-${randomBytes(3).toString('hex')}`;
    const deployed = await deploy(
      { api } as TestPlatform,
      m.owner.token,
      site({
        'index.html': '<h1>kept</h1>',
        'functions/hello.js': `export default (request) => new Response('hello ' + new URL(request.url).searchParams.get('who'));`,
        'functions/slow.js': `export default async () => { await new Promise((r) => setTimeout(r, 60_000)); return new Response('late'); };`,
      }),
      { name: `Keep ${subdomain}`, subdomain },
    );
    const projectId = deployed.begin.project_id;
    const put = await api('PUT', `/api/v1/projects/${projectId}/env/API_SECRET`, {
      token: m.owner.token,
      body: { value: 's3cret', environment: 'production' },
    });
    expect(put.status).toBeLessThan(300);
    // One call runs (slow), the next waits in the queue behind it.
    const slow = await api('POST', `/api/v1/public/functions/${subdomain}/slow`);
    await until(
      () => api('GET', slow.body.data.poll_url).then((r) => r.body.data.status),
      (s) => s === 'running',
    );
    const waiting = await api('POST', `/api/v1/public/functions/${subdomain}/hello?who=later`);
    expect(waiting.status).toBe(202);
    await sleep(300);
    expect((await api('GET', waiting.body.data.poll_url)).body.data.status).toBe('pending');
    const sealedBefore = (
      await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.envVariable(projectId, 'production', 'API_SECRET') }))
    ).Item!.value_sealed as string;

    // Last: a provisional project whose expiry schedule falls due while the platform is stopped.
    const provisional = await api('POST', '/api/v1/uploads', {
      token: m.owner.token,
      body: { files: site({ 'index.html': 'p' }).files, project: { name: `Prov ${subdomain}` } },
    });
    expect(provisional.status).toBe(201);
    const due = await api('GET', `/api/v1/projects/${provisional.body.data.project_id}`, { token: m.owner.token });
    const dueAt = Date.parse(due.body.data.provisional_until);
    await stop(first);
    expect(statSync(join(dir, 'state', 'moto.pickle')).size).toBeGreaterThan(0);
    expect(statSync(join(dir, 'state', 'secrets.json')).mode & 0o777).toBe(0o600);
    // Stopped before its schedule fell due; started again only once it has (the stop itself took part of the wait).
    await sleep(Math.max(0, dueAt + 200 - Date.now()));

    const second = await start();
    expect(second.output).toMatch(/State: +resumed the state saved in /);
    const again = apiOf(second.baseUrl);
    // The token, the user and the team.
    const profile = await again('GET', '/api/v1/team/profile', { token: m.owner.token });
    expect(profile.status).toBe(200);
    expect(profile.body.data.id).toBe(m.team.id);
    // The published site, on the new port.
    const page = await siteRequest(second.port, `${subdomain}.localhost:${second.port}`, '/');
    expect(page.status, second.log()).toBe(200);
    expect(page.text).toBe('<h1>kept</h1>');
    // The function on its hostname.
    const door = await doorRequest(second.port, functionHostname(`hello-${subdomain}`, second.port), '/?who=door');
    expect(door.status).toBe(200);
    expect(door.text).toBe('hello door');
    // The call that waited runs after the start; the one the stop cut short ends with the restart sentence.
    const ran = await until(
      () => again('GET', waiting.body.data.poll_url).then((r) => r.body.data),
      (d) => d.status === 'completed',
    );
    expect(ran).toMatchObject({ status: 'completed', response_status: 200 });
    expect(Buffer.from(ran.response_body, 'base64').toString()).toBe('hello later');
    expect((await again('GET', slow.body.data.poll_url)).body.data).toMatchObject({
      status: 'timed_out',
      error_message: INVOCATION_ERRORS.reclaimedRunning,
    });
    // The schedule that fell due while stopped fired after the start: the provisional project is gone.
    const gone = await until(
      () => again('GET', `/api/v1/projects/${provisional.body.data.project_id}`, { token: m.owner.token }),
      (r) => r.status === 404,
    );
    expect(gone.status, `${gone.text}\n${second.log()}`).toBe(404);
    // The stored secret is still readable: the key it was sealed with was kept.
    const sealed = (
      await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.envVariable(projectId, 'production', 'API_SECRET') }))
    ).Item!.value_sealed as string;
    expect(sealed).toBe(sealedBefore);
    expect(decryptEnvValue(sealed, { projectId, environment: 'production', name: 'API_SECRET' })).toBe('s3cret');
    await stop(second);

    const fresh = await start(['--fresh']);
    expect(fresh.output).toMatch(/State: +started empty \(--fresh\)/);
    expect((await apiOf(fresh.baseUrl)('GET', '/api/v1/team/profile', { token: m.owner.token })).status).toBe(401);
    expect(existsSync(join(dir, 'state', 'moto.pickle'))).toBe(false);
    await stop(fresh);
  }, 240_000);
});

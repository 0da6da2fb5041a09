import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startLocalPlatform, type LocalPlatform } from '../../lib/local/platform.ts';
import { freePort } from '../../lib/local/ports.ts';
import { localParts } from '../../lib/local/wiring.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { doorRequest, functionHostname, type DoorResponse } from '../support/door.ts';
import { asTestPlatform, makeTeamWithRoles } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';
import { until } from '../support/wait.ts';

/**
 * A client that polls the platform while it starts, as a health check, a browser tab or a script does: from the
 * first moment the port accepts connections, requests to the API (with a token), a site host and a function host.
 * Until the platform is provisioned and configured each answers 503 PLATFORM_STARTING with Retry-After, never a
 * 500 or an answer from half-set configuration; and a function deployed afterwards answers on that same run
 * (the door read no function domain before the platform set it).
 */
process.env.SCREENSHOT_CAPTURE ??= 'off';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A token of the right shape that names no credential: its look-up needs the table. */
const UNKNOWN_TOKEN = `slw_s_${'a'.repeat(43)}`;

interface Seen {
  target: 'api' | 'site' | 'function';
  beforeReady: boolean;
  reply: DoorResponse;
}

describe('the local platform as it starts', () => {
  let platform: LocalPlatform | null = null;
  afterAll(async () => {
    await platform?.stop();
  });

  it('answers 503 PLATFORM_STARTING with Retry-After until it is ready, then serves functions deployed after it started', async () => {
    const port = await freePort();
    const subdomain = `boot-${randomBytes(3).toString('hex')}`;
    const parts = localParts();
    let ready = false;
    const starting = startLocalPlatform({
      port,
      prefix: `t${randomBytes(5).toString('hex')}`,
      awsEndpoint: inject('awsEndpoint'),
      hostnameHandlers: parts.hostnameHandlers,
      drivers: parts.drivers,
    }).then((started) => {
      ready = true;
      platform = started;
      return started;
    });
    starting.catch(() => undefined);

    const targets: { target: Seen['target']; host: string; headers: Record<string, string> }[] = [
      { target: 'api', host: `localhost:${port}`, headers: { authorization: `Bearer ${UNKNOWN_TOKEN}` } },
      { target: 'site', host: `${subdomain}.localhost:${port}`, headers: {} },
      { target: 'function', host: functionHostname(`hello-${subdomain}`, port), headers: {} },
    ];
    const seen: Seen[] = [];
    // Knock until the port accepts a connection, then keep every target busy until the platform is started.
    while (!ready) {
      const round = await Promise.all(
        targets.map(async ({ target, host, headers }) => {
          const beforeReady = !ready;
          const path = target === 'api' ? '/api/v1/team/profile' : '/';
          const reply = await doorRequest(port, host, path, { headers }).catch(() => null);
          return reply ? { target, beforeReady, reply } : null;
        }),
      );
      for (const entry of round) if (entry) seen.push(entry);
      if (round.every((entry) => entry === null)) await sleep(2);
    }
    const started = asTestPlatform(await starting);

    const early = seen.filter((s) => s.beforeReady && s.reply.headers['retry-after'] !== undefined);
    // Every target was answered at least once while the platform was still starting.
    for (const target of ['api', 'site', 'function'] as const) expect(early.some((s) => s.target === target)).toBe(true);
    for (const { reply } of seen) expect(reply.status).not.toBe(500);
    for (const { reply } of early) {
      expect(reply.status).toBe(503);
      expect(reply.headers['retry-after']).toBe('1');
      const body = JSON.parse(reply.text);
      expect(body).toMatchObject({
        code: 'PLATFORM_STARTING',
        details: null,
        error: 'The platform is starting. Try again after the time in Retry-After.',
      });
      expect(body.meta).toMatchObject({ request_id: expect.any(String), timestamp: expect.any(String), trace_id: expect.any(String) });
    }

    // Now ready: the API and the site host answer for real, and a function deployed now answers at its host.
    const api = await started.api('GET', '/api/v1/team/profile', { token: UNKNOWN_TOKEN });
    expect(api.status).toBe(401);
    expect(api.body.code).toBe('UNAUTHENTICATED');
    const { team, owner } = await makeTeamWithRoles();
    await setFunctionsEnrolment(team.id, true);
    await deploy(
      started,
      owner.token,
      site({ 'index.html': '<h1>booted</h1>', 'functions/hello.js': `export default () => new Response('hello after start');` }),
      { name: `Boot ${subdomain}`, subdomain },
    );
    // A knock the door answered in its first moment read this host before the deploy, and the door keeps a host's
    // route for FUNCTIONS_ROUTE_CACHE_MS (1 s), as for a promote: the new function answers within that time.
    let fn: DoorResponse | undefined;
    await until(
      async () => (fn = await doorRequest(port, functionHostname(`hello-${subdomain}`, port))).status === 200,
      'the function deployed after the start to answer at its host',
      3_000,
    );
    expect(fn!.status).toBe(200);
    expect(fn!.text).toBe('hello after start');
    const page = await doorRequest(port, `${subdomain}.localhost:${port}`);
    expect(page.status).toBe(200);
    expect(page.text).toBe('<h1>booted</h1>');
  }, 90_000);
});

import { randomBytes, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { functionIdFor } from '../../lib/functions/records.ts';
import { COCKPIT_NOT_ENROLLED } from '../../lib/functions/telemetry-report.ts';
import { hourOf, weekStartOf } from '../../lib/functions/telemetry.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { doorRequest, functionHostname } from '../support/door.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';
import { scaled } from '../support/wait.ts';

/**
 * Spec endpoint 13 and "Admin functions telemetry": real traffic through the
 * local HTTPS and queued doors, which write the telemetry rows, read back by
 * the admin endpoint; then rows of other hours and weeks written in the
 * shapes lib/functions/telemetry.ts writes, for the windows.
 */
const BUDGET_MS = 2000;
const IDLE_MS = 1500;
process.env.FUNCTIONS_BUDGET_MS = String(BUDGET_MS);
// No instance stops as idle between the test's requests, however slowly a loaded machine sends them (a second cold
// start would change the counts); the last request's instance gets IDLE_MS (the pool reads it when a request ends).
process.env.FUNCTIONS_IDLE_MS = String(scaled(60_000));
process.env.FUNCTIONS_ROUTE_CACHE_MS = '0';
process.env.FUNCTIONS_TELEMETRY_FLUSH_MS = '200';
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY = 86_400_000;

let platform: TestPlatform;
let admin: Awaited<ReturnType<typeof makeUser>>;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let subdomain: string;
let projectId: string;
let projectName: string;

const telemetry = (teamId: string, token: string | null = admin.token) =>
  platform.api('GET', `/api/v1/admin/teams/${teamId}/functions`, { token: token ?? undefined });

beforeAll(async () => {
  platform = await startTestPlatform();
  admin = await makeUser({ platformAdmin: true, name: 'Platform Admin' });
  roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  subdomain = `tele-${randomBytes(3).toString('hex')}`;
  projectName = `Telemetry ${subdomain}`;
  const deployed = await deploy(
    platform,
    roles.owner.token,
    site({
      'index.html': '<h1>telemetry</h1>',
      'functions/hello.js': `export default () => new Response('hello');`,
      'functions/echo.js': `export default async (request) => new Response(String((await request.arrayBuffer()).byteLength));`,
      'functions/slow.js': `export default async () => { await new Promise((r) => setTimeout(r, ${BUDGET_MS + 500})); return new Response('late'); };`,
    }),
    { name: projectName, subdomain },
  );
  projectId = deployed.begin.project_id;
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

describe('GET /api/v1/admin/teams/{id}/functions: from real traffic', () => {
  it('limits hit, cold starts, the week, and the 7-day cost per function, as the doors recorded them', async () => {
    const at = (name: string, options: Parameters<typeof doorRequest>[3] = {}) =>
      doorRequest(platform.port, functionHostname(`${name}-${subdomain}`, platform.port), '/', options);
    const first = await at('hello');
    expect(first.headers['x-scaler-http-cold-start']).toBe('true');
    expect((await at('hello')).status).toBe(200);
    process.env.FUNCTIONS_IDLE_MS = String(IDLE_MS);
    expect((await at('hello')).status).toBe(200);
    expect((await at('echo', { method: 'POST', body: Buffer.alloc(10 * 1024 * 1024 + 1) })).status).toBe(413);
    expect((await at('slow')).status).toBe(504);

    // One queued invocation, run by the local worker: the week's background figures.
    const invoke = await platform.api('POST', `/api/v1/public/functions/${subdomain}/hello`, { body: {} });
    expect(invoke.status).toBe(202);
    for (let i = 0; i < 100; i++) {
      const poll = await platform.api('GET', `/api/v1/${invoke.body.data.poll_url.replace(/^\/?api\/v1\//, '')}`);
      if (poll.body.data?.status === 'completed') break;
      await sleep(100);
    }
    // Instances stop when idle (instance seconds and peak memory are written then), and the counts flush in the
    // background: read until the stop and the queued run are there.
    const data = await vi.waitFor(
      async () => {
        const reply = await telemetry(roles.team.id);
        expect(reply.status).toBe(200);
        const found = reply.body.data;
        expect(found.cost.functions.find((r: any) => r.function_name === 'hello')?.peak_memory_mib).toBeGreaterThan(10);
        expect(found.weekly_usage[0]?.background_invocations).toBe(1);
        const hits = (name: string, kind: string) =>
          found.limits_hit.rows.find((r: any) => r.function_name === name && r.kind === kind)?.count_7d;
        expect([hits('echo', 'body_413'), hits('slow', 'http_timeout')]).toEqual([1, 1]);
        return found;
      },
      { timeout: scaled(20_000), interval: 200 },
    );
    expect(Object.keys(data).sort()).toEqual(['cold_starts', 'cost', 'generated_at', 'limits_hit', 'weekly_usage']);
    expect(Date.parse(data.generated_at)).toBeGreaterThan(Date.now() - 60_000);

    const fid = (name: string) => functionIdFor(projectId, name);
    const common = { owner_email: roles.owner.user.email, project_name: projectName, team_id: roles.team.id };
    expect(data.limits_hit.cockpit_available).toBe(true);
    expect(data.limits_hit.cockpit_reason).toBe('');
    const row = (name: string, kind: string) => data.limits_hit.rows.find((r: any) => r.function_name === name && r.kind === kind);
    expect(row('echo', 'body_413')).toEqual({
      ...common,
      function_id: fid('echo'),
      function_name: 'echo',
      kind: 'body_413',
      count_7d: 1,
      count_24h: 1,
      last_hit_at: expect.any(String),
    });
    expect(row('slow', 'http_timeout')).toMatchObject({ count_7d: 1, count_24h: 1, last_hit_at: expect.any(String) });
    // With the cockpit, its kinds are listed for every function, zero included.
    expect(row('hello', 'body_413')).toMatchObject({ count_7d: 0, count_24h: 0, last_hit_at: null });
    expect(row('hello', 'http_timeout')).toMatchObject({ count_7d: 0, count_24h: 0, last_hit_at: null });
    expect(data.limits_hit.rows.filter((r: any) => !['body_413', 'http_timeout'].includes(r.kind))).toEqual([]);

    expect(data.cold_starts.map((r: any) => r.function_name)).toEqual(['echo', 'hello', 'slow']);
    const hello = data.cold_starts.find((r: any) => r.function_name === 'hello');
    expect(hello).toMatchObject({ ...common, function_id: fid('hello'), pod_starts_7d: 1, pod_starts_24h: 1, wakes_7d: 1, wakes_24h: 1 });
    expect(hello.wake_share_24h).toBeCloseTo(1 / 3, 3);
    expect(Number.isInteger(hello.boot_ms_p50_7d) && hello.boot_ms_p50_7d > 0).toBe(true);
    expect(hello.boot_ms_p99_7d).toBeGreaterThanOrEqual(hello.boot_ms_p50_7d);

    expect(data.weekly_usage).toHaveLength(1);
    expect(data.weekly_usage[0]).toMatchObject({ week_start: weekStartOf(new Date()), background_invocations: 1 });
    expect(data.weekly_usage[0].http_requests).toBeGreaterThanOrEqual(3);
    expect(Number.isInteger(data.weekly_usage[0].background_runtime_seconds)).toBe(true);

    const cost = data.cost.functions.find((r: any) => r.function_name === 'hello');
    expect(cost).toMatchObject({ function_id: fid('hello'), memory_request_mib: 512, project_name: projectName });
    expect(cost.pod_seconds_7d).toBeGreaterThanOrEqual(1);
    expect(cost.peak_memory_mib).toBeGreaterThan(10);
    expect(cost.gib_seconds_7d).toBeGreaterThan(0);
    const podSeconds = data.cost.functions.reduce((n: number, r: any) => n + r.pod_seconds_7d, 0);
    expect(Math.abs(data.cost.http_pod_seconds_7d - podSeconds)).toBeLessThanOrEqual(data.cost.functions.length);
    expect(data.cost.http_gib_seconds_7d).toBeCloseTo(
      data.cost.functions.reduce((n: number, r: any) => n + r.gib_seconds_7d, 0),
      1,
    );
    expect(Number.isInteger(data.cost.background_runtime_seconds_7d)).toBe(true);
  }, 90_000);
});

describe('GET /api/v1/admin/teams/{id}/functions: windows', () => {
  it('7 and 24 hours from hourly rows, 8 weeks newest first with empty weeks absent; without the cockpit its kinds are absent, never zero', async () => {
    // A team not enrolled in the beta whose function is gone: only its rows remain.
    const m = await makeTeamWithRoles();
    const team = m.team.id;
    const gone = randomUUID();
    const fn = randomUUID();
    const now = Date.now();
    const hourRow = async (ago: number, fields: Record<string, unknown>) => {
      const hour = hourOf(new Date(now - ago));
      await dynamo().send(
        new PutCommand({
          TableName: config.tableName(),
          Item: {
            ...keys.functionStatsHour(team, hour, fn),
            function_id: fn,
            function_name: 'old',
            project_id: gone,
            team_id: team,
            hour,
            ...fields,
          },
        }),
      );
    };
    await hourRow(0, {
      http_requests: 4,
      wakes: 1,
      pod_starts: 1,
      boot_ms: [30],
      instance_seconds: 10.4,
      peak_memory_mib: 40,
      background_runtime_seconds: 2.2,
      limit_out_of_memory: 1,
      limit_out_of_memory_last_at: 'B',
      limit_body_413: 3,
    });
    await hourRow(3 * DAY, {
      http_requests: 6,
      wakes: 2,
      pod_starts: 2,
      boot_ms: [10, 20],
      instance_seconds: 20,
      peak_memory_mib: 90,
      background_runtime_seconds: 1,
      limit_out_of_memory: 2,
      limit_out_of_memory_last_at: 'A',
      limit_http_timeout: 5,
    });
    // Outside the 7 days: never counted.
    await hourRow(8 * DAY, {
      http_requests: 1000,
      wakes: 1000,
      pod_starts: 1000,
      boot_ms: [99999],
      instance_seconds: 99999,
      peak_memory_mib: 500,
      background_runtime_seconds: 1000,
      limit_out_of_memory: 1000,
    });

    const monday = (weeksAgo: number) => weekStartOf(new Date(Date.parse(weekStartOf(new Date(now))) - weeksAgo * 7 * DAY));
    for (const [ago, requests] of [
      [0, 10],
      [2, 20],
      [7, 70],
      [8, 80],
    ] as const) {
      await dynamo().send(
        new PutCommand({
          TableName: config.tableName(),
          Item: {
            ...keys.functionStatsWeek(team, monday(ago)),
            team_id: team,
            week_start: monday(ago),
            http_requests: requests,
            background_invocations: ago,
            background_runtime_seconds: ago + 0.4,
          },
        }),
      );
    }

    const reply = await telemetry(team);
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    expect(data.limits_hit).toEqual({
      cockpit_available: false,
      cockpit_reason: COCKPIT_NOT_ENROLLED,
      rows: [
        {
          count_7d: 3,
          count_24h: 1,
          function_id: fn,
          function_name: 'old',
          kind: 'out_of_memory',
          last_hit_at: 'B',
          owner_email: m.owner.user.email,
          project_name: '',
          team_id: team,
        },
      ],
    });
    expect(data.cold_starts).toEqual([
      {
        boot_ms_p50_7d: 20,
        boot_ms_p99_7d: 30,
        function_id: fn,
        function_name: 'old',
        owner_email: m.owner.user.email,
        pod_starts_7d: 3,
        pod_starts_24h: 1,
        project_name: '',
        team_id: team,
        wake_share_24h: 0.25,
        wakes_7d: 3,
        wakes_24h: 1,
      },
    ]);
    expect(data.weekly_usage).toEqual([
      { background_invocations: 0, background_runtime_seconds: 0, http_requests: 10, week_start: monday(0) },
      { background_invocations: 2, background_runtime_seconds: 2, http_requests: 20, week_start: monday(2) },
      { background_invocations: 7, background_runtime_seconds: 7, http_requests: 70, week_start: monday(7) },
    ]);
    expect(data.cost).toEqual({
      background_runtime_seconds_7d: 3,
      http_gib_seconds_7d: 15.2,
      http_pod_seconds_7d: 30,
      functions: [
        {
          function_id: fn,
          function_name: 'old',
          gib_seconds_7d: 15.2,
          memory_request_mib: 512,
          peak_memory_mib: 90,
          pod_seconds_7d: 30,
          project_name: '',
        },
      ],
    });

    // Enrolled, the cockpit's kinds come back, counted from the same rows.
    await setFunctionsEnrolment(team, true);
    const enrolled = (await telemetry(team)).body.data.limits_hit;
    expect(enrolled.cockpit_available).toBe(true);
    expect(enrolled.rows.map((r: any) => [r.kind, r.count_7d, r.count_24h])).toEqual([
      ['body_413', 3, 3],
      ['http_timeout', 5, 0],
      ['out_of_memory', 3, 1],
    ]);
  });

  it('a team without functions, and an unknown team, get empty arrays and zeros, not 404', async () => {
    const empty = {
      limits_hit: { cockpit_available: false, cockpit_reason: COCKPIT_NOT_ENROLLED, rows: [] },
      cold_starts: [],
      weekly_usage: [],
      cost: { background_runtime_seconds_7d: 0, http_gib_seconds_7d: 0, http_pod_seconds_7d: 0, functions: [] },
    };
    const m = await makeTeamWithRoles();
    // A project without functions is no function.
    await deploy(platform, m.owner.token, site({ 'index.html': '<p>plain</p>' }), { name: `Plain ${randomBytes(3).toString('hex')}` });
    for (const team of [m.team.id, randomUUID()]) {
      const reply = await telemetry(team);
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ generated_at: expect.any(String), ...empty });
    }
    await setFunctionsEnrolment(m.team.id, true);
    expect((await telemetry(m.team.id)).body.data.limits_hit).toEqual({ cockpit_available: true, cockpit_reason: '', rows: [] });
  }, 60_000);
});

describe('GET /api/v1/admin/teams/{id}/functions: authorization', () => {
  it('platform administrators only: 403 PLATFORM_ADMIN_REQUIRED for the team owner, admin, member, its API key and outsiders; 401 without a token', async () => {
    for (const actor of [roles.owner, roles.admin, roles.member, roles.apiKey, roles.outsider]) {
      expectError(await telemetry(roles.team.id, actor.token), 403, 'PLATFORM_ADMIN_REQUIRED');
    }
    expectError(await telemetry(roles.team.id, null), 401, 'UNAUTHENTICATED');
    expectError(await telemetry(roles.team.id, `slw_s_${'C'.repeat(43)}`), 401, 'UNAUTHENTICATED');
    expect((await telemetry(roles.team.id, roles.platformAdmin.token)).status).toBe(200);
  });

  it('400 ADMIN_TEAM_ID_INVALID for an id that is not a UUID', async () => {
    for (const id of ['not-a-team', '1234', roles.team.slug]) expectError(await telemetry(id), 400, 'ADMIN_TEAM_ID_INVALID');
  });
});

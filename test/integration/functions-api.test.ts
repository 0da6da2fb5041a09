import { randomBytes } from 'node:crypto';
import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { scheduler } from '../../lib/aws/scheduler.ts';
import { config } from '../../lib/config.ts';
import { functionScheduleName, invocationsQueueArn, runScheduleTick, type ScheduleTick } from '../../lib/functions/schedules.ts';
import { FunctionTelemetry } from '../../lib/functions/telemetry.ts';
import { queuedRuntime } from '../../lib/local/queued-runtime.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { until } from '../support/wait.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, putMissing, site, uniqueName, uniqueSite } from '../support/uploads.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

/**
 * GET /api/v1/projects/{id}/functions and GET /api/v1/projects/{id}/deployments/{deployment_id}:
 * what they answer and who may read them. Scheduled functions: the schedule read at publish, the Scheduler
 * schedules following the live deployment, a tick's conditional writes raced, run now. (The scheduled run end to
 * end, in both modes: functions-queued.test.ts.)
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let project: { id: string; subdomain: string; deployment: string };

/**
 * The invocations queue's consumer, the one driver these cases need: the raced tick pauses it, so its run stays
 * pending (open) for as long as the case needs rather than for as long as a slow function sleeps.
 */
const runtime = queuedRuntime();

beforeAll(async () => {
  // A platform of its own: the raced tick pauses the queued runtime, which a shared platform's other files use.
  platform = await startTestPlatform({ drivers: [() => runtime] });
  m = await makeTeamWithRoles();
  const subdomain = `fa-${randomBytes(4).toString('hex')}`;
  const s = site({
    'index.html': `<p>${subdomain}</p>`,
    'functions/zeta.js': 'export default () => new Response("z")',
    'functions/alpha.ts': 'export default (): Response => new Response("a")',
  });
  const done = await deploy(platform, m.member.token, s, { name: uniqueName(), subdomain });
  project = { id: done.begin.project_id, subdomain, deployment: done.begin.deployment_id };
});
afterAll(() => platform?.stop());

const listFunctions = (token: string | undefined, id = project.id) => platform.api('GET', `/api/v1/projects/${id}/functions`, { token });
const getDeployment = (token: string | undefined, deploymentId = project.deployment, id = project.id) =>
  platform.api('GET', `/api/v1/projects/${id}/deployments/${deploymentId}`, { token });

describe('GET /api/v1/projects/{id}/functions', { timeout: 60_000 }, () => {
  it("lists the live deployment's functions by name", async () => {
    const reply = await listFunctions(m.member.token);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      functions: ['alpha', 'zeta'].map((name) => ({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        name,
        url: `http://${name}-${project.subdomain}.fn.localhost:${platform.port}/`,
        deployment_id: project.deployment,
        entry_path: name === 'alpha' ? 'functions/alpha.ts' : 'functions/zeta.js',
        bundle_bytes: expect.any(Number),
        created_at: expect.any(String),
        schedule: null,
        next_run_at: null,
        skipped_runs: 0,
      })),
      functions_beta_enrolled: false,
    });
  });

  it('is empty for a project with nothing live', async () => {
    const begin = await platform.api('POST', '/api/v1/uploads', {
      token: m.member.token,
      body: { files: uniqueSite().files, project: { name: uniqueName() } },
    });
    expect(begin.status).toBe(201);
    const reply = await listFunctions(m.member.token, begin.body.data.project_id);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ functions: [], functions_beta_enrolled: false });
  });

  it('authorization: every role and an API key; 404 outside the team; 401 without credentials', async () => {
    for (const actor of [m.owner, m.admin, m.member, m.apiKey]) expect((await listFunctions(actor.token)).status).toBe(200);
    expectError(await listFunctions(m.outsider.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await listFunctions(m.platformAdmin.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await listFunctions(undefined), 401, 'UNAUTHENTICATED');
    expectError(await listFunctions(m.member.token, 'not-a-uuid'), 404, 'PROJECT_NOT_FOUND');
  });
});

describe('GET /api/v1/projects/{id}/deployments/{deployment_id}', { timeout: 60_000 }, () => {
  it('answers the deployment with its build log and functions', async () => {
    const reply = await getDeployment(m.member.token, project.deployment.toUpperCase());
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      id: project.deployment,
      project_id: project.id,
      team_id: m.team.id,
      status: 'ready',
      label: null,
      created_at: expect.any(String),
      ready_at: expect.any(String),
      file_count: 3,
      total_bytes: expect.any(Number),
      is_live: true,
      build_log: [expect.stringMatching(/^\[functions\] Built alpha \(/), expect.stringMatching(/^\[functions\] Built zeta \(/)],
      functions: ['alpha', 'zeta'],
      // No _redirects or _headers in this deployment.
      serving_rules: { redirects: 0, headers: 0, skipped: [], skipped_count: 0 },
      // A direct upload is not a build: the build fields are there, empty.
      trigger: null,
      target: null,
      branch: null,
      commit_sha: null,
      commit_message: null,
      merge_request: null,
      preview_url: null,
      queued_at: null,
      started_at: null,
      finished_at: null,
      failure_message: null,
      skip_reason: null,
      log_lines: 2,
    });
  });

  it("404 DEPLOYMENT_NOT_FOUND for an unknown id, a non-UUID and another project's deployment", async () => {
    expectError(await getDeployment(m.member.token, '00000000-0000-4000-8000-000000000000'), 404, 'DEPLOYMENT_NOT_FOUND');
    expectError(await getDeployment(m.member.token, 'nope'), 404, 'DEPLOYMENT_NOT_FOUND');
    const other = await deploy(platform, m.member.token, uniqueSite(), { name: uniqueName() });
    expectError(await getDeployment(m.member.token, other.begin.deployment_id), 404, 'DEPLOYMENT_NOT_FOUND');
    expect((await getDeployment(m.member.token, other.begin.deployment_id, other.begin.project_id)).body.data).toMatchObject({
      build_log: [],
      functions: [],
    });
  });

  it('authorization: every role and an API key; 404 outside the team; 401 without credentials', async () => {
    for (const actor of [m.owner, m.admin, m.member, m.apiKey]) expect((await getDeployment(actor.token)).status).toBe(200);
    expectError(await getDeployment(m.outsider.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await getDeployment(m.platformAdmin.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await getDeployment(undefined), 401, 'UNAUTHENTICATED');
  });
});

/** The Scheduler schedule of a project's function in the platform's group (moto), or null when there is none. */
async function scheduleOf(projectId: string, name: string) {
  try {
    return await scheduler().send(
      new GetScheduleCommand({ GroupName: config.scheduleGroup(), Name: functionScheduleName(projectId, name) }),
    );
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return null;
    throw error;
  }
}

/** Publishes these files to the project (a redeploy); the finalize reply. */
async function redeploy(projectId: string, files: Record<string, string>, token = m.member.token) {
  const s = site(files);
  const begin = await platform.api('POST', `/api/v1/projects/${projectId}/uploads`, { token, body: { files: s.files } });
  expect(begin.status).toBe(201);
  await putMissing(platform, token, begin.body.data.upload_id, begin.body.data.missing, s);
  return platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token });
}

const scheduled = (schedule: string, body = 'new Response("ran")') =>
  `export const config = { schedule: '${schedule}' };\nexport default async () => ${body};`;

describe('scheduled functions', { timeout: 90_000 }, () => {
  let sched: { id: string; subdomain: string; first: string };

  beforeAll(async () => {
    await setFunctionsEnrolment(m.team.id, true);
    const subdomain = `fs-${randomBytes(4).toString('hex')}`;
    const done = await deploy(
      platform,
      m.member.token,
      site({
        'index.html': '<p>scheduled</p>',
        'functions/nightly.ts': scheduled('@yearly'),
        'functions/weekday.js': scheduled('30 6 * * 1-5'),
        'functions/plain.js': 'export default () => new Response("plain")',
      }),
      { name: uniqueName(), subdomain },
    );
    sched = { id: done.begin.project_id, subdomain, first: done.begin.deployment_id };
  });

  it('the listing shows each schedule and its next run; the build log names it; one Scheduler schedule per scheduled function', async () => {
    const reply = await listFunctions(m.member.token, sched.id);
    expect(reply.status).toBe(200);
    const byName = Object.fromEntries(reply.body.data.functions.map((f: any) => [f.name, f]));
    const nextYear = new Date().getUTCFullYear() + 1;
    expect(byName.nightly).toMatchObject({ schedule: '@yearly', next_run_at: `${nextYear}-01-01T00:00:00.000Z`, skipped_runs: 0 });
    expect(byName.weekday).toMatchObject({ schedule: '30 6 * * 1-5', skipped_runs: 0 });
    const weekdayNext = new Date(byName.weekday.next_run_at);
    expect([weekdayNext.getUTCHours(), weekdayNext.getUTCMinutes()]).toEqual([6, 30]);
    expect([1, 2, 3, 4, 5]).toContain(weekdayNext.getUTCDay());
    expect(byName.plain).toMatchObject({ schedule: null, next_run_at: null, skipped_runs: 0 });

    const log = (await getDeployment(m.member.token, sched.first, sched.id)).body.data.build_log;
    expect(log).toContainEqual(expect.stringMatching(/^\[functions\] Built nightly \(\d+\.\d KB\), runs on "@yearly" while live$/));

    const nightly = await scheduleOf(sched.id, 'nightly');
    expect(nightly).toMatchObject({
      GroupName: config.scheduleGroup(),
      ScheduleExpression: 'cron(0 0 1 1 ? *)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: invocationsQueueArn(), RoleArn: config.schedulerRoleArn() },
    });
    expect(JSON.parse(nightly!.Target!.Input!)).toEqual({
      schedule_tick: { project_id: sched.id, function: 'nightly', schedule: '@yearly', scheduled_time: '<aws.scheduler.scheduled-time>' },
    });
    expect((await scheduleOf(sched.id, 'weekday'))?.ScheduleExpression).toBe('cron(30 6 ? * MON-FRI *)');
    expect(await scheduleOf(sched.id, 'plain')).toBeNull();
  });

  it('an invalid schedule fails the publish with a build-log line naming the function and the expression; nothing changes', async () => {
    const fin = await redeploy(sched.id, { 'index.html': '<p>bad</p>', 'functions/nightly.ts': scheduled('61 * * * *') });
    expectError(fin, 422, 'FUNCTIONS_BUILD_FAILED');
    expect(JSON.stringify(fin.body)).toContain(
      '[functions] Build failed: nightly has an invalid schedule \\"61 * * * *\\": the minute field \\"61\\" is outside 0-59',
    );
    const unreadable = await redeploy(sched.id, {
      'index.html': '<p>bad</p>',
      'functions/weekday.js':
        'const every = "@daily";\nexport const config = { schedule: every };\nexport default () => new Response("x");',
    });
    expectError(unreadable, 422, 'FUNCTIONS_BUILD_FAILED');
    expect(JSON.stringify(unreadable.body)).toContain(
      '[functions] Build failed: weekday has a schedule that cannot be read: config.schedule must be a string literal',
    );
    expect((await scheduleOf(sched.id, 'nightly'))?.ScheduleExpression).toBe('cron(0 0 1 1 ? *)');
  });

  it('a redeploy changes and drops schedules at once; a rollback (promote) brings them back; deleting the project leaves none', async () => {
    const next = await redeploy(sched.id, {
      'index.html': '<p>v2</p>',
      'functions/nightly.ts': scheduled('15 3 * * *'),
      'functions/plain.js': 'export default () => new Response("plain")',
    });
    expect(next.status).toBe(200);
    expect((await scheduleOf(sched.id, 'nightly'))?.ScheduleExpression).toBe('cron(15 3 * * ? *)');
    expect(await scheduleOf(sched.id, 'weekday')).toBeNull();
    const listed = (await listFunctions(m.member.token, sched.id)).body.data.functions;
    expect(listed.map((f: any) => [f.name, f.schedule])).toEqual([
      ['nightly', '15 3 * * *'],
      ['plain', null],
    ]);

    const rollback = await platform.api('POST', `/api/v1/projects/${sched.id}/promote`, {
      token: m.member.token,
      body: { deployment_id: sched.first },
    });
    expect(rollback.status).toBe(200);
    expect((await scheduleOf(sched.id, 'nightly'))?.ScheduleExpression).toBe('cron(0 0 1 1 ? *)');
    expect((await scheduleOf(sched.id, 'weekday'))?.ScheduleExpression).toBe('cron(30 6 ? * MON-FRI *)');

    // A tick of a schedule the live deployment no longer has (one left behind) starts nothing.
    const stale: ScheduleTick = {
      project_id: sched.id,
      function: 'nightly',
      schedule: '15 3 * * *',
      scheduled_time: '2026-01-01T03:15:00Z',
    };
    expect(await runScheduleTick(stale, new FunctionTelemetry())).toBe('dropped');

    const gone = await platform.api('DELETE', `/api/v1/projects/${sched.id}`, { token: m.admin.token });
    expect(gone.status).toBe(202);
    await until(
      async () => (await scheduleOf(sched.id, 'nightly')) === null && (await scheduleOf(sched.id, 'weekday')) === null,
      'schedules deleted',
    );
  });
});

describe('a tick of a schedule: one run at a time, raced', { timeout: 90_000 }, () => {
  it('deliveries of one tick at once start one run; ticks while it is open are skipped and counted once each', async () => {
    await setFunctionsEnrolment(m.team.id, true);
    const subdomain = `ft-${randomBytes(4).toString('hex')}`;
    // Its schedule fires once a year: the ticks below are the test's own.
    const done = await deploy(
      platform,
      m.member.token,
      site({
        'index.html': '<p>t</p>',
        'functions/slow.js': scheduled('@yearly'),
      }),
      { name: uniqueName(), subdomain },
    );
    const projectId = done.begin.project_id;
    const telemetry = new FunctionTelemetry();
    const tick = (time: string): ScheduleTick => ({ project_id: projectId, function: 'slow', schedule: '@yearly', scheduled_time: time });

    // The first tick's run waits in the queue (pending) until the ticks that come while it is open have been raced.
    runtime.pause();
    onTestFinished(() => runtime.resume());
    const first = await Promise.all(Array.from({ length: 4 }, () => runScheduleTick(tick('2027-01-01T00:00:00Z'), telemetry)));
    expect(first.sort()).toEqual(['duplicate', 'duplicate', 'duplicate', 'started']);
    const invocations = async () =>
      (await platform.api('GET', `/api/v1/projects/${projectId}/functions/slow/invocations`, { token: m.member.token })).body.data
        .invocations;
    const [run] = await invocations();
    expect(run).toMatchObject({ trigger: 'schedule' });
    expect(run.status).toBe('pending');

    // The next ticks while it is open: each skipped once, however many deliveries race.
    const second = await Promise.all(Array.from({ length: 3 }, () => runScheduleTick(tick('2028-01-01T00:00:00Z'), telemetry)));
    expect(second.sort()).toEqual(['duplicate', 'duplicate', 'skipped']);
    expect(await runScheduleTick(tick('2029-01-01T00:00:00Z'), telemetry)).toBe('skipped');
    // A minute that is not one of the schedule's (Scheduler's superset of days) starts nothing.
    expect(await runScheduleTick(tick('2030-01-02T00:00:00Z'), telemetry)).toBe('dropped');
    expect((await invocations()).length).toBe(1);
    const listed = (await listFunctions(m.member.token, projectId)).body.data.functions[0];
    expect(listed).toMatchObject({ name: 'slow', schedule: '@yearly', skipped_runs: 2 });

    // Once it has ended, the next tick runs, with the following tick in its body.
    runtime.resume();
    await until(async () => (await invocations())[0].status === 'completed', 'the scheduled run completed', 60_000);
    expect(await runScheduleTick(tick('2031-01-01T00:00:00Z'), telemetry)).toBe('started');
    const [latest] = await invocations();
    const member = await platform.api('GET', `/api/v1/projects/${projectId}/functions/slow/invocations/${latest.id}`, {
      token: m.member.token,
    });
    expect(member.body.data).toMatchObject({ trigger: 'schedule', function_name: 'slow' });
    await telemetry.flush();
  }, 90_000);
});

describe('POST /api/v1/projects/{id}/functions/{name}/runs (run now)', { timeout: 60_000 }, () => {
  const runNow = (token: string | undefined, name: string, init: { id?: string; body?: string; headers?: Record<string, string> } = {}) =>
    platform.api('POST', `/api/v1/projects/${init.id ?? project.id}/functions/${name}/runs`, {
      token,
      rawBody: init.body,
      headers: init.headers,
    });

  it('202 with invocation_id, pending and the poll URL; the run is manual and gets the body sent', async () => {
    await setFunctionsEnrolment(m.team.id, true);
    const reply = await runNow(m.admin.token, 'zeta', { body: '{"hello":1}', headers: { 'content-type': 'application/json' } });
    expect(reply.status).toBe(202);
    expect(Object.keys(reply.body.data).sort()).toEqual(['invocation_id', 'poll_url', 'status']);
    const { invocation_id, status, poll_url } = reply.body.data;
    expect(status).toBe('pending');
    expect(poll_url).toBe(`/api/v1/public/functions/${project.subdomain}/zeta/invocations/${invocation_id}`);
    await until(async () => (await platform.api('GET', poll_url)).body.data.status === 'completed', 'the manual run completed', 30_000);
    const member = await platform.api('GET', `/api/v1/projects/${project.id}/functions/zeta/invocations/${invocation_id}`, {
      token: m.member.token,
    });
    expect(member.body.data).toMatchObject({ trigger: 'manual', status: 'completed', response_status: 200 });
    const listed = await platform.api('GET', `/api/v1/projects/${project.id}/functions/zeta/invocations`, { token: m.member.token });
    expect(listed.body.data.invocations[0]).toMatchObject({ id: invocation_id, trigger: 'manual' });
  });

  it('404 FUNCTION_NOT_FOUND for a function the live deployment lacks; team admins only; 404 outside the team; 401', async () => {
    expectError(await runNow(m.admin.token, 'nosuch'), 404, 'FUNCTION_NOT_FOUND');
    expectError(await runNow(m.admin.token, 'Bad_Name'), 404, 'FUNCTION_NOT_FOUND');
    expectError(await runNow(m.member.token, 'zeta'), 403, 'FORBIDDEN');
    expectError(await runNow(m.outsider.token, 'zeta'), 404, 'PROJECT_NOT_FOUND');
    expectError(await runNow(undefined, 'zeta'), 401, 'UNAUTHENTICATED');
    const owner = await runNow(m.owner.token, 'alpha');
    expect(owner.status).toBe(202);
    await until(
      async () => (await platform.api('GET', owner.body.data.poll_url)).body.data.status === 'completed',
      'the run completed',
      30_000,
    );
  });
});

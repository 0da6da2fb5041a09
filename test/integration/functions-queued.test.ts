import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { s3 } from '../../lib/aws/s3.ts';
import { scheduler } from '../../lib/aws/scheduler.ts';
import { sqs } from '../../lib/aws/sqs.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { INVOCATION_ERRORS } from '../../lib/functions/invocations.ts';
import { resolveFunctionBySubdomain } from '../../lib/functions/resolve.ts';
import { functionScheduleName, invocationsQueueArn } from '../../lib/functions/schedules.ts';
import { queuedRuntime } from '../../lib/local/queued-runtime.ts';
import { schedulerDriver } from '../../lib/local/scheduler-driver.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { withEnv } from '../support/env.ts';
import { scaled } from '../support/wait.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, putMissing, site } from '../support/uploads.ts';

/**
 * The queued door end to end (spec endpoint 10, the Invocation state table,
 * the fixed error sentences): invoke and poll over the API, the invocations
 * queue, the worker's claim, a fresh sandboxed runner per invocation. The
 * budget is shortened; the per-IP rate is raised here (its own test file
 * races the caps at the spec's values).
 */
const BUDGET_MS = 3000;
/** How long `slow` would run if nothing stopped it: far past the budget, so an end before it is a stop. */
const SLOW_MS = BUDGET_MS * 10;
/**
 * The synthesized project runs this file against the template (docs/synthesized-mode.md): the invocations
 * queue's event source mapping, the `function-invocations` worker Lambda with its own grants, and a Fargate task
 * of the runner image per invocation in the local ECS. Where the cloud differs by design (docs/functions.md,
 * "Queued invocations in the cloud"), the test says so and asserts what the cloud does.
 */
const cloud = process.env.SLIPWAY_PLATFORM_MODE === 'synth';
/**
 * In the cloud the budget runs from the task's RUNNING, so it covers the container's own start (Node, the bundle
 * and request downloads, the handler's process) that a pre-forked local runner has done ahead: on a loaded machine
 * that can pass 3 s, so only the timeout case gets the short budget there (withEnv: the worker reads it per run).
 */
const DEFAULT_BUDGET_MS = cloud ? 30_000 : BUDGET_MS;
process.env.FUNCTIONS_BUDGET_MS = String(DEFAULT_BUDGET_MS);
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';
// The cloud host's look at the task and its result (1 s in the cloud), shortened as the budget is.
process.env.FUNCTIONS_TASK_POLL_MS = '200';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const FUNCTIONS: Record<string, string> = {
  'functions/echo.js': `
    export default async (request, context) => {
      context.waitUntil(new Promise(() => {}));
      console.log('echo ran');
      console.error('echo to stderr');
      const body = Buffer.from(await request.arrayBuffer());
      const headers = new Headers({ 'content-type': 'application/json' });
      headers.append('set-cookie', 'a=1; Path=/');
      headers.append('set-cookie', 'b=2; Secure');
      return new Response(JSON.stringify({
        url: request.url,
        method: request.method,
        host: request.headers.get('host'),
        custom: request.headers.get('x-custom'),
        cookie: request.headers.get('cookie'),
        bodyLength: body.length,
        bodyStart: body.subarray(0, 5).toString(),
        envKeys: Object.keys(context.env),
      }), { status: 201, headers });
    };`,
  'functions/throws.js': `export default () => { console.log('about to throw'); throw new Error('secret-thrown-detail'); };`,
  'functions/bad.js': `export default () => 'not a Response';`,
  'functions/exits.js': `export default () => { console.log('leaving now'); process.exit(7); };`,
  'functions/slow.js': `export default async () => { await new Promise((r) => setTimeout(r, ${SLOW_MS})); return new Response('too late'); };`,
  'functions/hog.js': `
    export default () => {
      const kept = [];
      for (let i = 0; i < 48; i++) kept.push(Buffer.alloc(16 * 1024 * 1024, i + 1));
      return new Response('survived ' + kept.length * 16 + ' MB');
    };`,
  'functions/nostart.js': `export default () => new Response('never');`,
  'functions/gone.js': `export default () => new Response('still here');`,
  'functions/once.js': `export default async () => { await new Promise((r) => setTimeout(r, 800)); return new Response('once'); };`,
};

/**
 * A scheduled function, published in beforeAll with a schedule of one minute a day: the first whole minute far
 * enough ahead for the publish to have made its schedule. Its tick is asserted last, so the cases of this file run
 * while it comes. It answers with the body its tick sent.
 */
/**
 * A case's budget: in the template a run is a task the local ECS starts (a process, its image's entry), several per
 * case, which a busy machine's fresh-clone run took past the default 30 s.
 */
const caseTimeout = scaled(cloud ? 90_000 : 30_000);

let tickAt: Date;
function addScheduledFunction(): void {
  // The synthesized mode's publish (the finalize Lambda, a Lambda per function) takes longer.
  tickAt = new Date(Math.ceil((Date.now() + (cloud ? 30_000 : 12_000)) / 60_000) * 60_000);
  FUNCTIONS['functions/tick.js'] = `
    export const config = { schedule: '${tickAt.getUTCMinutes()} ${tickAt.getUTCHours()} * * *' };
    export default async (request) => new Response(await request.text(), { headers: { 'x-method': request.method } });`;
}

let platform: TestPlatform;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let subdomain: string;
let projectId: string;
/** Called on each run the worker starts, while a test counts them. */
let onRun: (() => void) | null = null;
const runtime = queuedRuntime({
  host: (sandboxed) => ({
    forwardHttp: (...args) => sandboxed.forwardHttp(...args),
    runQueued: (...args) => {
      // The scheduled function's tick is no run a case counts.
      if (args[0].name !== 'tick') onRun?.();
      return sandboxed.runQueued(...args);
    },
  }),
});

/** What holds a message in the invocations queue: the source mode's driver, or the template's event source mappings. */
const queue = () => (cloud ? platform.synthesized!.queues()! : runtime);
/** The local ECS's task for one invocation (the worker starts it with the invocation id as startedBy). */
const tasksOf = (invocationId: string) => platform.synthesized!.ecs.tasks().filter((task) => task.startedBy === invocationId.slice(0, 36));

const invokePath = (name: string, sub = subdomain) => `/api/v1/public/functions/${sub}/${name}`;

async function invoke(name: string, init: { query?: string; body?: string | Buffer; headers?: Record<string, string> } = {}) {
  return platform.api('POST', `${invokePath(name)}${init.query ? `?${init.query}` : ''}`, { rawBody: init.body, headers: init.headers });
}

/** Polls until the invocation is terminal; returns the last poll reply's data. */
async function until(pollUrl: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await platform.api('GET', pollUrl);
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    if (['completed', 'failed', 'timed_out'].includes(data.status)) return data;
    if (Date.now() > deadline) throw new Error(`still ${data.status}`);
    await sleep(100);
  }
}

/** The team's in-flight slots item (FNINFLIGHT), as the table holds it. */
async function inflightItem() {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.functionInflight(roles.team.id), ConsistentRead: true }),
  );
  return reply.Item as { slots: Record<string, number> } | undefined;
}

async function run(name: string, init: Parameters<typeof invoke>[1] = {}) {
  const reply = await invoke(name, init);
  expect(reply.status).toBe(202);
  return until(reply.body.data.poll_url);
}

beforeAll(async () => {
  platform = await startTestPlatform(cloud ? {} : { drivers: [() => runtime, () => schedulerDriver()] });
  roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  // A recurring schedule made after its minute first fires a day later: a publish that ended too late (a busy
  // machine) is made again, in a project of its own, under a later minute.
  do {
    subdomain = `q-${randomBytes(3).toString('hex')}`;
    addScheduledFunction();
    const deployed = await deploy(platform, roles.owner.token, site({ 'index.html': '<h1>queued</h1>', ...FUNCTIONS }), {
      name: `Queued ${subdomain}`,
      subdomain,
    });
    projectId = deployed.begin.project_id;
  } while (Date.now() > tickAt.getTime() - 2_000);
}, 240_000);
afterAll(async () => {
  await platform?.stop();
});

describe('queued door: invoke and poll', { timeout: caseTimeout }, () => {
  it('202 with invocation_id, pending and a poll_url relative to the base URL; the poll walks to completed with the result fields', async () => {
    const reply = await invoke('echo', {
      query: 'a=1&b=two',
      body: 'hello body',
      headers: { 'content-type': 'text/plain', 'X-Custom': 'Yes', cookie: 'c1=v1; c2=v2' },
    });
    expect(reply.status).toBe(202);
    const { invocation_id, status, poll_url } = reply.body.data;
    expect(Object.keys(reply.body.data).sort()).toEqual(['invocation_id', 'poll_url', 'status']);
    expect(status).toBe('pending');
    expect(poll_url).toBe(`/api/v1/public/functions/${subdomain}/echo/invocations/${invocation_id}`);

    const first = await platform.api('GET', poll_url);
    expect(first.status).toBe(200);
    expect(['pending', 'running', 'completed']).toContain(first.body.data.status);

    const done = await until(poll_url);
    expect(done.status).toBe('completed');
    expect(done.id).toBe(invocation_id);
    // The end and the slot's release are one write: a poll that sees the end finds the slot free.
    expect(Object.keys((await inflightItem())?.slots ?? {})).not.toContain(invocation_id);
    expect(Date.parse(done.started_at)).toBeLessThanOrEqual(Date.parse(done.finished_at));
    expect(done.response_status).toBe(201);
    expect(done.error_message).toBeUndefined();
    expect(done.console).toBeUndefined();
    // Several Set-Cookie joined into one.
    expect(done.response_headers['set-cookie']).toBe('a=1; Path=/, b=2; Secure');
    const seen = JSON.parse(Buffer.from(done.response_body, 'base64').toString('utf8'));
    expect(seen).toEqual({
      url: `http://echo-${subdomain}.fn.localhost:${platform.port}/?a=1&b=two`,
      method: 'POST',
      host: `echo-${subdomain}.fn.localhost:${platform.port}`,
      custom: 'Yes',
      cookie: 'c1=v1; c2=v2',
      bodyLength: 10,
      bodyStart: 'hello',
      envKeys: [],
    });
  });

  it("with the team's in-flight item gone before the end (its items deleted meanwhile), the end is still written and the item not made again", async () => {
    queue().pause();
    let pollUrl: string;
    try {
      const reply = await invoke('echo');
      expect(reply.status).toBe(202);
      pollUrl = reply.body.data.poll_url;
      expect(Object.keys((await inflightItem())!.slots)).toContain(reply.body.data.invocation_id);
      await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.functionInflight(roles.team.id) }));
    } finally {
      queue().resume();
    }
    expect((await until(pollUrl!)).status).toBe('completed');
    // An update of the missing item would have made one without its slots, which no later invoke could take.
    expect(await inflightItem()).toBeUndefined();
    expect((await run('echo')).status).toBe('completed');
  });

  it('a body over 1 MB is cut at 1 MB, not refused', async () => {
    const big = Buffer.alloc(1024 * 1024 + 5000, 'x');
    const done = await run('echo', { body: big, headers: { 'content-type': 'application/octet-stream' } });
    expect(done.status).toBe('completed');
    expect(JSON.parse(Buffer.from(done.response_body, 'base64').toString()).bodyLength).toBe(1024 * 1024);
  });

  it('404 for an unknown subdomain or name, a team not enrolled and a project with no functions; an id of another function is 404', async () => {
    expect((await platform.api('POST', invokePath('nosuch'))).body.code).toBe('FUNCTION_NOT_FOUND');
    expect((await platform.api('POST', invokePath('echo', `none-${randomBytes(3).toString('hex')}`))).status).toBe(404);
    expect((await platform.api('POST', invokePath('Bad_Name'))).status).toBe(404);
    const plain = `plain-${randomBytes(3).toString('hex')}`;
    await deploy(platform, roles.owner.token, site({ 'index.html': '<p>none</p>' }), { name: `Plain ${plain}`, subdomain: plain });
    expect((await platform.api('POST', invokePath('echo', plain))).status).toBe(404);

    const outsider = `out-${randomBytes(3).toString('hex')}`;
    await deploy(platform, roles.outsider.token, site({ 'index.html': '<p>x</p>', 'functions/echo.js': FUNCTIONS['functions/echo.js']! }), {
      name: `Out ${outsider}`,
      subdomain: outsider,
    });
    expect((await platform.api('POST', invokePath('echo', outsider))).status).toBe(404);

    const reply = await invoke('echo');
    const id = reply.body.data.invocation_id;
    const other = await platform.api('GET', `/api/v1/public/functions/${subdomain}/throws/invocations/${id}`);
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('INVOCATION_NOT_FOUND');
    expect(
      (await platform.api('GET', `/api/v1/public/functions/${subdomain}/echo/invocations/${randomBytes(16).toString('hex')}`)).status,
    ).toBe(404);
    await until(reply.body.data.poll_url);
  }, 60_000);
});

describe('queued door: every way a run ends, with its spec sentence', { timeout: caseTimeout }, () => {
  it('a handler that throws: failed, its 500 kept in the result fields', async () => {
    const done = await run('throws');
    expect(done).toMatchObject({
      status: 'failed',
      error_message: INVOCATION_ERRORS.handlerError,
      response_status: 500,
      response_body: '',
    });
    expect(JSON.stringify(done)).not.toContain('secret-thrown-detail');
  });

  it('a handler whose process exits without a response: failed as a handler error, a bare 500, its console kept', async () => {
    // In the cloud the task's entry sees its child end without a result and exits 3, which the worker reads as crashed.
    const done = await run('exits');
    expect(done).toMatchObject({
      status: 'failed',
      error_message: INVOCATION_ERRORS.handlerError,
      response_status: 500,
      response_body: '',
    });
    const path = `/api/v1/projects/${projectId}/functions/exits/invocations/${done.id}`;
    const lines = (await platform.api('GET', path, { token: roles.member.token })).body.data.console;
    expect(lines).toContainEqual(expect.objectContaining({ stream: 'stdout', line: 'leaving now' }));
    if (cloud)
      expect(tasksOf(done.id)[0]).toMatchObject({
        stopCode: 'EssentialContainerExited',
        containers: [expect.objectContaining({ exitCode: 3 })],
      });
  });

  it('a handler that returns a non-Response: failed', async () => {
    expect(await run('bad')).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.invalidResponse });
  });

  it('a handler that allocates past 512 MB: failed, out of memory', async () => {
    // Near its cap the kernel reclaims the runner's own pages before it kills: about 5 s on these
    // machines, longer than the short budget the other cases use (read per run, so it applies to this one).
    process.env.FUNCTIONS_BUDGET_MS = '30000';
    try {
      expect(await run('hog')).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.outOfMemory });
    } finally {
      process.env.FUNCTIONS_BUDGET_MS = String(DEFAULT_BUDGET_MS);
    }
  }, 60_000);

  it('a handler that runs past the budget: timed_out, the container stopped at the budget', async () => {
    const done = await withEnv({ FUNCTIONS_BUDGET_MS: String(BUDGET_MS) }, () => run('slow'));
    expect(done).toMatchObject({ status: 'timed_out', error_message: INVOCATION_ERRORS.timedOut });
    const took = Date.parse(done.finished_at) - Date.parse(done.started_at);
    expect(took).toBeGreaterThanOrEqual(BUDGET_MS - 100);
    // It was cut, not run to its end. How soon after the budget the stop lands is a wall-clock figure that a busy
    // machine stretches (seconds under two runs at once), so the state is what is asserted.
    expect(took).toBeLessThan(SLOW_MS);
    // In the cloud the budget runs from the task's RUNNING; the worker then stops the task (StopTask): its entry
    // uploads the console on SIGTERM and exits 143.
    const [task] = cloud ? tasksOf(done.id) : [];
    if (cloud) {
      expect(task).toMatchObject({ desiredStatus: 'STOPPED', stoppedReason: 'Slipway: the invocation reached its time budget' });
      await vi.waitFor(
        () =>
          expect(tasksOf(done.id)[0]).toMatchObject({
            lastStatus: 'STOPPED',
            stopCode: 'UserInitiated',
            containers: [expect.objectContaining({ exitCode: 143 })],
          }),
        { timeout: scaled(5000), interval: 100 },
      );
    }
  }, 60_000);

  it('a runner that cannot start (its bundle is gone): failed, a platform issue', async () => {
    const fn = (await resolveFunctionBySubdomain(subdomain, 'nostart'))!;
    await s3().send(new DeleteObjectCommand({ Bucket: config.bucket('bundles'), Key: fn.bundle_key }));
    expect(await run('nostart')).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.couldNotRun });
  });

  it('a function removed between invoke and run: failed, not deployed; the poll still answers', async () => {
    queue().pause();
    let pollUrl: string;
    try {
      const reply = await invoke('gone');
      expect(reply.status).toBe(202);
      pollUrl = reply.body.data.poll_url;
      expect((await platform.api('GET', pollUrl)).body.data).toMatchObject({ status: 'pending', started_at: null, finished_at: null });
      // Redeploy without `gone`.
      const next = site({
        'index.html': '<h1>queued v2</h1>',
        ...Object.fromEntries(Object.entries(FUNCTIONS).filter(([path]) => path !== 'functions/gone.js')),
      });
      const again = await platform.api('POST', `/api/v1/projects/${projectId}/uploads`, {
        token: roles.owner.token,
        body: { files: next.files },
      });
      expect(again.status).toBe(201);
      await putMissing(platform, roles.owner.token, again.body.data.upload_id, again.body.data.missing, next);
      expect(
        (await platform.api('POST', `/api/v1/uploads/${again.body.data.upload_id}/finalize`, { token: roles.owner.token })).status,
      ).toBe(200);
    } finally {
      queue().resume();
    }
    expect(await until(pollUrl!)).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.notDeployed });
  }, 60_000);

  it('a redelivered message (the same message sent twice) runs the handler once', async () => {
    let runs = 0;
    onRun = () => (runs += 1);
    try {
      queue().pause();
      const reply = await invoke('once');
      const id = reply.body.data.invocation_id;
      // The same message again, twice: three deliveries of one invocation.
      for (let i = 0; i < 2; i++) {
        await sqs().send(
          new SendMessageCommand({ QueueUrl: config.queueUrl('invocations'), MessageBody: JSON.stringify({ invocation_id: id }) }),
        );
      }
      queue().resume();
      const done = await until(reply.body.data.poll_url);
      expect(done.status).toBe('completed');
      await sleep(500);
      await queue().idle();
      // In the cloud a run is a Fargate task the worker starts with the invocation id.
      expect(cloud ? tasksOf(id).length : runs).toBe(1);
    } finally {
      queue().resume();
      onRun = null;
    }
  });
});

/**
 * The warm pool (docs/functions.md, "The warm pool"), which only the template has: blank tasks of the runner's task
 * definition on the cluster's FARGATE_SPOT, each waiting for one assignment. Sized here for these cases only (the
 * synth project runs with none: vitest.config.ts).
 */
if (cloud)
  describe('queued door in the cloud: the warm pool', () => {
    const ecsTasks = () => platform.synthesized!.ecs.tasks();
    const blanks = () => ecsTasks().filter((task) => task.startedBy?.startsWith('warm-slot-'));
    const waiting = () => blanks().filter((task) => task.lastStatus === 'RUNNING' && task.desiredStatus === 'RUNNING');

    it('each blank task takes exactly one invocation, runs it and exits; the pool is refilled; a blank that ends its wait leaves the invocation to a task of its own', async () => {
      // A setting of the platform's own (the Lambdas' environments took the project's 0 from it at the start).
      const size = platform.env.FUNCTIONS_WARM_TASKS;
      platform.env.FUNCTIONS_WARM_TASKS = '2';
      try {
        // The first invocation finds the pool empty: a task of its own, and the pool filled meanwhile.
        const first = await run('echo', { body: 'first' });
        expect(first.status).toBe('completed');
        expect(tasksOf(first.id)).toHaveLength(1);
        await vi.waitFor(
          () =>
            expect(
              waiting()
                .map((t) => t.startedBy)
                .sort(),
            ).toEqual(['warm-slot-0', 'warm-slot-1']),
          {
            timeout: 60_000,
            interval: 200,
          },
        );
        // Three more, one after another: each runs in a blank task, none starts a task of its own.
        const ids: string[] = [];
        for (const body of ['second', 'third', 'fourth']) {
          const done = await run('echo', { body });
          expect(done).toMatchObject({ status: 'completed', response_status: 201 });
          expect(tasksOf(done.id)).toEqual([]);
          ids.push(done.id);
          await vi.waitFor(() => expect(waiting()).toHaveLength(2), { timeout: 60_000, interval: 200 });
        }
        // Each of the three ran in a blank task of its own, which ran that one invocation (its output holds the
        // handler's one line) and exited 0. No blank ran two; any other blank ran none (still waiting, or stopped
        // before it took one: a busy run once had a fourth stopped blank that had run nothing).
        const ranIn = (task: ReturnType<typeof blanks>[number]) => task.output.split('\n').filter((line) => line === 'echo ran').length;
        await vi.waitFor(() => expect(blanks().filter((t) => t.lastStatus === 'STOPPED' && ranIn(t) === 1)).toHaveLength(3), {
          timeout: 20_000,
          interval: 200,
        });
        for (const task of blanks()) {
          if (ranIn(task) === 0) continue;
          expect(ranIn(task)).toBe(1);
          expect(task).toMatchObject({
            lastStatus: 'STOPPED',
            stopCode: 'EssentialContainerExited',
            containers: [expect.objectContaining({ exitCode: 0 })],
          });
        }

        // A blank stopped before its assignment came (a Spot interruption): its entry exits 4, having run nothing,
        // and the worker that took it starts a task of the invocation's own.
        queue().pause();
        let pollUrl: string;
        try {
          const reply = await invoke('echo', { body: 'after an interruption' });
          pollUrl = reply.body.data.poll_url;
          for (const task of waiting()) platform.synthesized!.ecs.stopTask(task.taskArn, 'Your Spot Task was interrupted.');
        } finally {
          queue().resume();
        }
        const done = await until(pollUrl!, 60_000);
        expect(done.status).toBe('completed');
        expect(tasksOf(done.id)).toHaveLength(1);
        expect(blanks().filter((t) => t.containers[0]?.exitCode === 4).length).toBeGreaterThanOrEqual(1);
      } finally {
        platform.env.FUNCTIONS_WARM_TASKS = size!;
      }
    }, 240_000);
  });

describe('queued door: console output for team members', { timeout: caseTimeout }, () => {
  it('members (session or API key) read the invocation with its console lines; the public poll never has them; outsiders get 404', async () => {
    const reply = await invoke('throws');
    const id = reply.body.data.invocation_id;
    const polled = await until(reply.body.data.poll_url);
    expect(polled.console).toBeUndefined();
    expect(JSON.stringify(polled)).not.toContain('about to throw');

    const path = `/api/v1/projects/${projectId}/functions/throws/invocations/${id}`;
    for (const token of [roles.member.token, roles.apiKey.token]) {
      const got = await platform.api('GET', path, { token });
      expect(got.status).toBe(200);
      const data = got.body.data;
      expect(data).toMatchObject({
        id,
        status: 'failed',
        error_message: INVOCATION_ERRORS.handlerError,
        response_status: 500,
        function_name: 'throws',
      });
      const lines = data.console as { at: string; stream: string; line: string }[];
      expect(lines).toContainEqual(expect.objectContaining({ stream: 'stdout', line: 'about to throw' }));
      // The handler's error and its stack are in the logs ("Check the invocation logs"), for members only.
      expect(lines.some((l) => l.stream === 'stderr' && l.line.includes('secret-thrown-detail'))).toBe(true);
      for (const line of lines) expect(Number.isNaN(Date.parse(line.at))).toBe(false);
    }
    expect((await platform.api('GET', path, { token: roles.outsider.token })).status).toBe(404);
    expect((await platform.api('GET', path)).status).toBe(401);
    expect(
      (await platform.api('GET', `/api/v1/projects/${projectId}/functions/echo/invocations/${id}`, { token: roles.member.token })).body
        .code,
    ).toBe('INVOCATION_NOT_FOUND');
  });

  it("lists a function's recent invocations, newest first, for members", async () => {
    const first = await invoke('bad');
    await until(first.body.data.poll_url);
    const second = await invoke('bad');
    await until(second.body.data.poll_url);
    const list = await platform.api('GET', `/api/v1/projects/${projectId}/functions/bad/invocations`, { token: roles.member.token });
    expect(list.status).toBe(200);
    const ids = list.body.data.invocations.map((i: { id: string }) => i.id);
    expect(ids.indexOf(second.body.data.invocation_id)).toBeLessThan(ids.indexOf(first.body.data.invocation_id));
    expect(list.body.data.invocations[0]).toMatchObject({
      status: 'failed',
      error_message: INVOCATION_ERRORS.invalidResponse,
      response_status: 500,
    });
    expect(list.body.data.invocations[0].console).toBeUndefined();
    expect(
      (await platform.api('GET', `/api/v1/projects/${projectId}/functions/bad/invocations`, { token: roles.outsider.token })).status,
    ).toBe(404);
  });
});

// Last in the file: the tick of the function beforeAll published comes while the cases above run.
describe('scheduled functions: a tick of the live deployment', () => {
  it('its Scheduler schedule sends to the invocations queue as the scheduler role; the tick is a queued run, trigger schedule', async () => {
    // In the synthesized mode the finalize Lambda made it under its own role (scheduler:CreateSchedule on the
    // group's schedules, iam:PassRole of the scheduler role), through the IAM proxy.
    const made = await scheduler().send(
      new GetScheduleCommand({ GroupName: config.scheduleGroup(), Name: functionScheduleName(projectId, 'tick') }),
    );
    expect(made).toMatchObject({
      ScheduleExpression: `cron(${tickAt.getUTCMinutes()} ${tickAt.getUTCHours()} * * ? *)`,
      Target: { Arn: invocationsQueueArn(), RoleArn: config.schedulerRoleArn() },
    });
    const listPath = `/api/v1/projects/${projectId}/functions/tick/invocations`;
    let ran: any;
    await vi.waitFor(
      async () => {
        const [latest] = (await platform.api('GET', listPath, { token: roles.member.token })).body.data.invocations;
        // With its error, so that a run that failed says why (a busy fresh-clone run once had one fail).
        expect({ trigger: latest?.trigger, status: latest?.status, error: latest?.error_message ?? null }).toEqual({
          trigger: 'schedule',
          status: 'completed',
          error: null,
        });
        ran = latest;
      },
      { timeout: Math.max(0, tickAt.getTime() - Date.now()) + 70_000, interval: 250 },
    );
    // Fired at its minute, not before.
    expect(Date.parse(ran.created_at)).toBeGreaterThanOrEqual(tickAt.getTime());
    const member = await platform.api('GET', `${listPath}/${ran.id}`, { token: roles.member.token });
    expect(member.body.data).toMatchObject({ trigger: 'schedule', response_status: 200, response_headers: { 'x-method': 'POST' } });
    const nextRun = new Date(tickAt.getTime() + 86_400_000).toISOString();
    expect(Buffer.from(member.body.data.response_body, 'base64').toString()).toBe(JSON.stringify({ next_run: nextRun }));
    const listed = (await platform.api('GET', `/api/v1/projects/${projectId}/functions`, { token: roles.member.token })).body.data
      .functions;
    expect(listed.find((f: { name: string }) => f.name === 'tick')).toMatchObject({ next_run_at: nextRun, skipped_runs: 0 });
  }, 160_000);
});

import { randomBytes, randomUUID } from 'node:crypto';
import { createApiKey } from '../lib/identity/credential-records.ts';
import { createUser } from '../lib/users/user-records.ts';
import { startLocalPlatform } from '../lib/local/platform.ts';
import { assemblyDir, ensureSynthesized } from '../local-cloud/template/assembly.ts';
import { setFunctionsEnrolment } from '../lib/teams/standing.ts';
import { createTeam } from '../lib/teams/teams.ts';
import { deploySiteFiles } from './support.ts';

/**
 * The queued door as the template runs it (the synthesized mode: the invocations worker Lambda, a task of the
 * runner's task definition in the local ECS), with and without the warm pool, in one run, rounds interleaved:
 * - POST to `running`: the record's started_at (the worker's claim, before any task starts: the same either way);
 * - POST to the handler running: the handler answers its own clock (one machine, one clock);
 * - POST to `completed`, as a client polling every 50 ms sees it.
 * With the pool, each invocation waits until the pool is full again, as a call that comes after a refill would.
 * The local ECS starts a task in a second or so where Fargate takes tens of seconds (placement, image pull), so the
 * cold figures here are the floor of the cloud's, and the difference the pool makes there is larger.
 */
const ROUNDS = Number(process.env.BENCH_QUEUED_WARM_ROUNDS ?? 5);
const POOL = 2;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Timing {
  runningMs: number;
  handlerMs: number;
  completedMs: number;
}

async function invokeOnce(baseUrl: string, path: string): Promise<Timing> {
  const sent = Date.now();
  const reply = await fetch(`${baseUrl}${path}`, { method: 'POST' });
  if (reply.status !== 202) throw new Error(`invoke: ${reply.status} ${await reply.text()}`);
  const { poll_url } = ((await reply.json()) as { data: { poll_url: string } }).data;
  for (;;) {
    const poll = (await (await fetch(`${baseUrl}${poll_url}`)).json()) as {
      data: { status: string; started_at: string | null; response_body?: string };
    };
    if (['failed', 'timed_out'].includes(poll.data.status)) throw new Error(`invocation ${poll.data.status}`);
    if (poll.data.status === 'completed') {
      const handlerAt = Number(Buffer.from(poll.data.response_body!, 'base64').toString());
      return { runningMs: Date.parse(poll.data.started_at!) - sent, handlerMs: handlerAt - sent, completedMs: Date.now() - sent };
    }
    await sleep(50);
  }
}

export async function runQueuedWarmBench(): Promise<void> {
  await ensureSynthesized((line) => console.log(line));
  process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '1000000';
  const platform = await startLocalPlatform({
    port: 0,
    prefix: `benchw${randomBytes(3).toString('hex')}`,
    synthesized: { assemblyDir: assemblyDir() },
  });
  try {
    const user = await createUser({ email: `bench-${randomUUID()}@example.test`, name: 'Bench' });
    const team = await createTeam({ name: `Bench ${randomBytes(3).toString('hex')}`, ownerUserId: user.user_id });
    await setFunctionsEnrolment(team.id, true);
    const token = await createApiKey(team.id);
    const subdomain = `benchw-${randomBytes(3).toString('hex')}`;
    await deploySiteFiles(
      platform.baseUrl,
      token,
      { 'index.html': '<h1>bench</h1>', 'functions/when.js': 'export default () => new Response(String(Date.now()));' },
      { name: `Bench ${subdomain}`, subdomain },
    );
    const path = `/api/v1/public/functions/${subdomain}/when`;
    const tasks = () => platform.synthesized!.ecs.tasks();
    const waitingBlanks = () =>
      tasks().filter((t) => t.startedBy?.startsWith('warm-slot-') && t.lastStatus === 'RUNNING' && t.desiredStatus === 'RUNNING').length;
    const poolFull = async () => {
      const until = Date.now() + 120_000;
      while (waitingBlanks() < POOL) {
        if (Date.now() > until) throw new Error('the warm pool did not fill');
        await sleep(100);
      }
    };
    // The pool's size is a setting of the platform's own (the Lambdas read it from there at each invocation).
    platform.env.FUNCTIONS_WARM_TASKS = '0';
    // Warm the worker Lambda and the image's files, then fill the pool once.
    await invokeOnce(platform.baseUrl, path);
    platform.env.FUNCTIONS_WARM_TASKS = String(POOL);
    await invokeOnce(platform.baseUrl, path);
    await poolFull();

    const cold: Timing[] = [];
    const warm: Timing[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      platform.env.FUNCTIONS_WARM_TASKS = '0';
      cold.push(await invokeOnce(platform.baseUrl, path));
      platform.env.FUNCTIONS_WARM_TASKS = String(POOL);
      await poolFull();
      warm.push(await invokeOnce(platform.baseUrl, path));
    }
    const line = (label: string, runs: Timing[]) =>
      `${label}: POST to running ${median(runs.map((r) => r.runningMs)).toFixed(0)} ms, ` +
      `to the handler running ${median(runs.map((r) => r.handlerMs)).toFixed(0)} ms ` +
      `(min ${Math.min(...runs.map((r) => r.handlerMs)).toFixed(0)}, max ${Math.max(...runs.map((r) => r.handlerMs)).toFixed(0)}), ` +
      `to completed ${median(runs.map((r) => r.completedMs)).toFixed(0)} ms`;
    console.log(`queued door, synthesized mode, median of ${ROUNDS} interleaved rounds:`);
    console.log(line('  without the pool (a task per invocation)', cold));
    console.log(line(`  with the pool (${POOL} blank tasks)      `, warm));
  } finally {
    await platform.stop();
  }
}

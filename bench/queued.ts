import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { readdirSync, readFileSync } from 'node:fs';
import type { ClientRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createApiKey } from '../lib/identity/credential-records.ts';
import { createUser } from '../lib/users/user-records.ts';
import { startLocalPlatform } from '../lib/local/platform.ts';
import { queuedRuntime } from '../lib/local/queued-runtime.ts';
import { setFunctionsEnrolment } from '../lib/teams/standing.ts';
import { createTeam } from '../lib/teams/teams.ts';
import { workers } from '../lib/workers.ts';
import { deploySiteFiles } from './support.ts';

/**
 * The queued door on this machine, fully sandboxed (a fresh runner process per invocation):
 * - latency: POST invoke to `completed` for a trivial handler, median of 20 sequential
 *   invocations, as a client polling every 10 ms sees it (target: at most 150 ms), and by
 *   the record's finished_at;
 * - sustained throughput: invocations completed per second with 10 in flight, the team's cap
 *   (target: at least 15 a second);
 * - the platform's own CPU per invocation (target: at most 40 ms) and the calls it makes to the
 *   AWS endpoint (moto), under that load. The platform runs in this process and nothing else does:
 *   the client is a process of its own (queued-client.mjs), moto is one, and each runner is a
 *   child, so `process.cpuUsage()` of this process (every thread of it, children never) is the
 *   platform's. Moto's CPU is read from /proc/<pid>/stat. AWS calls are counted as they leave
 *   (the `http.client.request.start` and `undici:request:create` diagnostics channels: the SDK's
 *   clients and the fetch-based ones). A poll is the client's choice, so what one costs is
 *   measured apart (polls of a finished invocation) and every poll but the one that reads the
 *   result is taken out; so is what the idle platform spends meanwhile (the invocations queue's
 *   long poll: the platform runs that queue's consumer and no other driver).
 * The per-IP rate cap is raised for the run: it would otherwise allow 20 requests a minute.
 */
export const targets = { latencyMs: 150, invocationsPerSecond: 15, platformCpuMsPerInvocation: 40 } as const;

const RUNS = Number(process.env.BENCH_QUEUED_RUNS ?? 20);
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const IN_FLIGHT = 10;
/** The load runs on until this many have ended, so that a loaded machine still gives a figure of some weight. */
const AT_LEAST = 60;
const IDLE_SECONDS = 5;
const POLLS = 200;
const CLOCK_TICKS_PER_SECOND = 100;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the client process with one task and answers its JSON line. */
function client<T>(task: Record<string, unknown>): Promise<T> {
  const file = fileURLToPath(new URL('./queued-client.mjs', import.meta.url));
  const child = spawn(process.execPath, [file, JSON.stringify(task)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`queued client exited ${code}`)))),
  );
}

/** utime + stime of a process, in ms (every thread of it). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** The moto_server this process started. */
function motoPid(): number {
  for (const entry of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('moto_server')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error('no moto_server child found');
}

/** Every request to the AWS endpoint as it leaves this process, by operation (`GetItem`, `SendMessage`, `GET /schedules`). */
function countAwsCalls(endpointHost: string): Map<string, number> {
  const calls = new Map<string, number>();
  // Without a target header it is a REST call: S3's (the bucket) or Scheduler's (`/schedules`).
  const count = (target: string | undefined, method: string, path: string) => {
    const op = target ? target.split('.').pop()! : `${method} /${path.split(/[/?]/)[1]}`;
    calls.set(op, (calls.get(op) ?? 0) + 1);
  };
  subscribe('http.client.request.start', (message) => {
    const request = (message as { request: ClientRequest }).request;
    if (String(request.getHeader('host')) === endpointHost)
      count(request.getHeader('x-amz-target') as string | undefined, request.method, request.path);
  });
  subscribe('undici:request:create', (message) => {
    const request = (message as { request: { origin: string; method: string; path: string; headers: string[] | string } }).request;
    if (new URL(request.origin).host !== endpointHost) return;
    const headers = Array.isArray(request.headers) ? request.headers : request.headers.split('\r\n').flatMap((l) => l.split(': '));
    const at = headers.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'x-amz-target');
    count(at >= 0 ? headers[at + 1] : undefined, request.method, request.path);
  });
  return calls;
}

interface Reading {
  platformMs: number;
  motoMs: number;
  calls: Map<string, number>;
}

function meter(motoPidNumber: number, calls: Map<string, number>) {
  const read = (): Reading => ({
    platformMs: (() => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    })(),
    motoMs: processCpuMs(motoPidNumber),
    calls: new Map(calls),
  });
  return {
    read,
    since(before: Reading): Reading {
      const now = read();
      const diff = new Map<string, number>();
      for (const [op, n] of now.calls) if (n - (before.calls.get(op) ?? 0) > 0) diff.set(op, n - (before.calls.get(op) ?? 0));
      return { platformMs: now.platformMs - before.platformMs, motoMs: now.motoMs - before.motoMs, calls: diff };
    },
  };
}

const total = (calls: Map<string, number>) => [...calls.values()].reduce((a, b) => a + b, 0);

export async function runQueuedBench(): Promise<void> {
  process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '1000000';
  // The queued path's one driver, the invocations queue's consumer: the others' background (their queues' long
  // polls, the scheduler's look at its schedules) is no invocation's cost, and under load it is not steady enough
  // to be measured idle and taken out.
  const platform = await startLocalPlatform({
    port: 0,
    prefix: `benchq${randomBytes(3).toString('hex')}`,
    drivers: [() => queuedRuntime({ rows: workers.filter((row) => row.name === 'function-invocations') })],
  });
  try {
    const calls = countAwsCalls(new URL(platform.awsEndpoint).host);
    const cpu = meter(motoPid(), calls);
    const user = await createUser({ email: `bench-${randomUUID()}@example.test`, name: 'Bench' });
    const team = await createTeam({ name: `Bench ${randomBytes(3).toString('hex')}`, ownerUserId: user.user_id });
    await setFunctionsEnrolment(team.id, true);
    const token = await createApiKey(team.id);
    const subdomain = `benchq-${randomBytes(3).toString('hex')}`;
    await deploySiteFiles(
      platform.baseUrl,
      token,
      { 'index.html': '<h1>bench</h1>', 'functions/hello.js': `export default () => new Response('hello');` },
      { name: `Bench ${subdomain}`, subdomain },
    );
    const baseUrl = platform.baseUrl;
    const path = `/api/v1/public/functions/${subdomain}/hello`;
    type Run = { clientMs: number; serverMs: number; status: string; pollUrl: string };
    // The bundle into the host's cache, the runner pool started.
    const warm = await client<{ runs: Run[] }>({ mode: 'sequential', baseUrl, path, runs: 2, pollMs: 10 });

    await sleep(1000);
    const idleFrom = cpu.read();
    await sleep(IDLE_SECONDS * 1000);
    const idle = cpu.since(idleFrom);

    const { runs } = await client<{ runs: Run[] }>({ mode: 'sequential', baseUrl, path, runs: RUNS, pollMs: 10 });
    const failed = runs.find((run) => run.status !== 'completed');
    if (failed) throw new Error(`a run ended ${failed.status}`);
    const latency = median(runs.map((run) => run.clientMs));
    const clientMs = runs.map((run) => run.clientMs);
    console.log(
      `queued POST to completed, median of ${RUNS}: ${latency.toFixed(0)} ms as the client sees it (10 ms polls; min ${Math.min(...clientMs).toFixed(0)}, max ${Math.max(...clientMs).toFixed(0)}), ` +
        `${median(runs.map((run) => run.serverMs)).toFixed(0)} ms by finished_at (target ${targets.latencyMs} ms: ${latency <= targets.latencyMs ? 'met' : 'NOT met'})`,
    );

    const pollFrom = cpu.read();
    const pollStarted = performance.now();
    await client({ mode: 'polls', baseUrl, pollUrl: warm.runs[0]!.pollUrl, count: POLLS });
    const pollSeconds = (performance.now() - pollStarted) / 1000;
    const polled = cpu.since(pollFrom);
    const idleShare = (ms: number, seconds: number) => (ms * seconds) / IDLE_SECONDS;
    const perPoll = {
      platformMs: (polled.platformMs - idleShare(idle.platformMs, pollSeconds)) / POLLS,
      motoMs: (polled.motoMs - idleShare(idle.motoMs, pollSeconds)) / POLLS,
      calls: (total(polled.calls) - idleShare(total(idle.calls), pollSeconds)) / POLLS,
    };

    const loadFrom = cpu.read();
    const load = await client<{ completed: number; other: number; polls: number; seconds: number }>({
      mode: 'load',
      baseUrl,
      path,
      inFlight: IN_FLIGHT,
      seconds: LOAD_SECONDS,
      atLeast: AT_LEAST,
      pollMs: 25,
    });
    const loaded = cpu.since(loadFrom);
    const rate = load.completed / load.seconds;
    console.log(
      `queued throughput, ${IN_FLIGHT} in flight for ${load.seconds.toFixed(0)} s: ${rate.toFixed(1)} invocations/s (${load.completed} completed; ` +
        `target ${targets.invocationsPerSecond}/s: ${rate >= targets.invocationsPerSecond ? 'met' : 'NOT met'})`,
    );

    const n = load.completed + load.other;
    const extraPolls = load.polls - n;
    const net = (value: number, idleValue: number, pollValue: number) =>
      (value - idleShare(idleValue, load.seconds) - extraPolls * pollValue) / n;
    const platformMs = net(loaded.platformMs, idle.platformMs, perPoll.platformMs);
    const callsPer = net(total(loaded.calls), total(idle.calls), perPoll.calls);
    console.log(
      `platform CPU per queued invocation (POST, record, queue, worker, runner start, result, one poll): ${platformMs.toFixed(1)} ms ` +
        `(target ${targets.platformCpuMsPerInvocation} ms: ${platformMs <= targets.platformCpuMsPerInvocation ? 'met' : 'NOT met'}); ` +
        `moto ${net(loaded.motoMs, idle.motoMs, perPoll.motoMs).toFixed(1)} ms; AWS calls ${callsPer.toFixed(1)}`,
    );
    const byOp = [...loaded.calls].sort((a, b) => b[1] - a[1]).map(([op, count]) => `${op} ${(count / n).toFixed(2)}`);
    console.log(
      `  as measured under the load, per invocation with its ${(load.polls / n).toFixed(1)} polls and the idle share: platform ${(loaded.platformMs / n).toFixed(1)} ms, ` +
        `moto ${(loaded.motoMs / n).toFixed(1)} ms, AWS calls ${(total(loaded.calls) / n).toFixed(1)} (${byOp.join(', ')})`,
    );
    console.log(
      `  a poll of a finished invocation: platform ${perPoll.platformMs.toFixed(2)} ms, moto ${perPoll.motoMs.toFixed(2)} ms, AWS calls ${perPoll.calls.toFixed(2)}; ` +
        `idle platform per second: ${(idle.platformMs / IDLE_SECONDS).toFixed(1)} ms CPU, moto ${(idle.motoMs / IDLE_SECONDS).toFixed(1)} ms, ` +
        `AWS calls ${(total(idle.calls) / IDLE_SECONDS).toFixed(1)} (${[...idle.calls].map(([op, c]) => `${op} ${c}`).join(', ')})`,
    );
  } finally {
    await platform.stop();
  }
}

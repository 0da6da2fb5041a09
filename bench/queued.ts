import { randomBytes, randomUUID } from 'node:crypto';
import { createApiKey } from '../lib/identity/credential-records.ts';
import { createUser } from '../lib/identity/user-records.ts';
import { startLocalPlatform } from '../lib/local/platform.ts';
import { localParts } from '../lib/local/wiring.ts';
import { setFunctionsEnrolment } from '../lib/teams/standing.ts';
import { createTeam } from '../lib/teams/teams.ts';
import { deploySiteFiles } from './support.ts';

/**
 * The queued door on this machine, fully sandboxed (a fresh runner process per invocation):
 * - latency: POST invoke to `completed` for a trivial handler, median of 20 sequential
 *   invocations, as a client polling every 10 ms sees it (target: at most 150 ms), and by
 *   the record's finished_at;
 * - sustained throughput: invocations completed per second with 10 in flight, the team's cap
 *   (target: at least 15 a second).
 * The per-IP rate cap is raised for the run: it would otherwise allow 20 requests a minute.
 */
export const targets = { latencyMs: 150, invocationsPerSecond: 15 } as const;

const RUNS = Number(process.env.BENCH_QUEUED_RUNS ?? 20);
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
const IN_FLIGHT = 10;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function invokeAndWait(
  baseUrl: string,
  path: string,
  pollMs: number,
): Promise<{ clientMs: number; serverMs: number; status: string }> {
  const sent = Date.now();
  const started = performance.now();
  const res = await fetch(`${baseUrl}${path}`, { method: 'POST' });
  if (res.status !== 202) throw new Error(`invoke: ${res.status} ${await res.text()}`);
  const { poll_url } = ((await res.json()) as { data: { poll_url: string } }).data;
  for (;;) {
    const poll = (await (await fetch(`${baseUrl}${poll_url}`)).json()) as { data: { status: string; finished_at: string | null } };
    if (['completed', 'failed', 'timed_out'].includes(poll.data.status)) {
      return { clientMs: performance.now() - started, serverMs: Date.parse(poll.data.finished_at!) - sent, status: poll.data.status };
    }
    await sleep(pollMs);
  }
}

export async function runQueuedBench(): Promise<void> {
  process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '1000000';
  const parts = localParts();
  const platform = await startLocalPlatform({
    port: 0,
    prefix: `benchq${randomBytes(3).toString('hex')}`,
    hostnameHandlers: parts.hostnameHandlers,
    drivers: parts.drivers,
  });
  try {
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
    const path = `/api/v1/public/functions/${subdomain}/hello`;
    await invokeAndWait(platform.baseUrl, path, 10); // the bundle into the host's cache, clients connected

    const client: number[] = [];
    const server: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const run = await invokeAndWait(platform.baseUrl, path, 10);
      if (run.status !== 'completed') throw new Error(`run ${i}: ${run.status}`);
      client.push(run.clientMs);
      server.push(run.serverMs);
    }
    const latency = median(client);
    console.log(
      `queued POST to completed, median of ${RUNS}: ${latency.toFixed(0)} ms as the client sees it (10 ms polls; min ${Math.min(...client).toFixed(0)}, max ${Math.max(...client).toFixed(0)}), ` +
        `${median(server).toFixed(0)} ms by finished_at (target ${targets.latencyMs} ms: ${latency <= targets.latencyMs ? 'met' : 'NOT met'})`,
    );

    let completed = 0;
    const until = Date.now() + LOAD_SECONDS * 1000;
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (Date.now() < until) {
          const run = await invokeAndWait(platform.baseUrl, path, 25);
          if (run.status === 'completed') completed++;
        }
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    const rate = completed / seconds;
    console.log(
      `queued throughput, ${IN_FLIGHT} in flight for ${LOAD_SECONDS} s: ${rate.toFixed(1)} invocations/s (${completed} completed; ` +
        `target ${targets.invocationsPerSecond}/s: ${rate >= targets.invocationsPerSecond ? 'met' : 'NOT met'})`,
    );
  } finally {
    await platform.stop();
  }
}

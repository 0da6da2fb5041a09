import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { queuedRuntime } from '../../lib/local/queued-runtime.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';
import { until } from '../support/wait.ts';

/**
 * The queued door's two caps, raced: 20 requests per minute per IP address
 * across invoke and poll (then 429 with Retry-After), and 10 invocations in
 * flight per team (then 429 'Too many concurrent invocations'). Both are
 * conditional writes on table counters, so 50 parallel requests get exactly
 * the allowance and no more.
 */
process.env.FUNCTIONS_BUDGET_MS = '5000';
delete process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The invocations queue's consumer, the one driver this file needs: paused while 50 invokes race for the in-flight
 * slots, so no accepted invocation can run and end (freeing its slot) before the last of them arrives.
 */
const runtime = queuedRuntime();
let platform: TestPlatform;
let subdomain: string;
let teamId: string;

beforeAll(async () => {
  // A platform of its own: its cases pause and resume the queued runtime, which a shared platform's other files use.
  platform = await startTestPlatform({ drivers: [() => runtime] });
  const roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  teamId = roles.team.id;
  subdomain = `caps-${randomBytes(3).toString('hex')}`;
  await deploy(
    platform,
    roles.owner.token,
    site({
      'index.html': '<h1>caps</h1>',
      'functions/wait.js': `export default async () => { await new Promise((r) => setTimeout(r, 2000)); return new Response('waited'); };`,
    }),
    { name: `Caps ${subdomain}`, subdomain },
  );
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

/** Waits until the current minute has at least `seconds` left, so a burst stays in one fixed window. */
async function freshWindow(seconds = 15) {
  while (60 - (Math.floor(Date.now() / 1000) % 60) < seconds) await sleep(250);
}

describe('queued door caps', () => {
  it('20 requests per minute per IP across invoke and poll: 50 parallel polls and invokes, exactly 20 pass, the rest 429 with Retry-After', async () => {
    await freshWindow();
    const requests = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0
        ? platform.api(
            'GET',
            `/api/v1/public/functions/${subdomain}/wait/invocations/00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          )
        : platform.api('POST', `/api/v1/public/functions/nosuch-${subdomain}/wait`),
    );
    const replies = await Promise.all(requests);
    const limited = replies.filter((r) => r.status === 429);
    expect(replies.filter((r) => r.status === 404).length).toBe(20);
    expect(limited.length).toBe(30);
    for (const reply of limited) {
      expect(reply.body.code).toBe('RATE_LIMITED');
      const retryAfter = Number(reply.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
  }, 60_000);

  it('10 invocations in flight per team: of 50 parallel invokes exactly 10 are accepted; once they end, the team may invoke again', async () => {
    // This test is about the in-flight cap, not the per-IP rate.
    process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';
    try {
      runtime.pause();
      const replies = await Promise.all(
        Array.from({ length: 50 }, () => platform.api('POST', `/api/v1/public/functions/${subdomain}/wait`)),
      ).finally(() => runtime.resume());
      const accepted = replies.filter((r) => r.status === 202);
      const refused = replies.filter((r) => r.status === 429);
      // Every reply is one of the two: a failure names what the others got.
      expect(replies.filter((r) => r.status !== 202 && r.status !== 429).map((r) => `${r.status} ${r.text}`)).toEqual([]);
      expect(accepted.length).toBe(10);
      expect(refused.length).toBe(40);
      for (const reply of refused) {
        expect(reply.body.code).toBe('TOO_MANY_CONCURRENT_INVOCATIONS');
        expect(reply.body.error).toBe('Too many concurrent invocations');
      }
      // All ten end; their slots are released.
      for (const reply of accepted) {
        const deadline = Date.now() + 40_000;
        for (;;) {
          const poll = await platform.api('GET', reply.body.data.poll_url);
          if (poll.body.data.status === 'completed') break;
          expect(['pending', 'running']).toContain(poll.body.data.status);
          if (Date.now() > deadline) throw new Error('did not complete');
          await sleep(200);
        }
      }
      expect((await platform.api('POST', `/api/v1/public/functions/${subdomain}/wait`)).status).toBe(202);

      // Telemetry: each refusal is a limit hit of its kind on the function's hourly row; runs count in the week,
      // written by the local worker every few seconds (FUNCTIONS_TELEMETRY_FLUSH_MS), not after each run.
      const rows = async () =>
        (
          await dynamo().send(
            new QueryCommand({
              TableName: config.tableName(),
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': `FNSTATS#${teamId}` },
            }),
          )
        ).Items!;
      const sum = (items: Record<string, unknown>[], field: string) => items.reduce((total, row) => total + (Number(row[field]) || 0), 0);
      await until(async () => sum(await rows(), 'background_invocations') >= 10, 'the ten runs in the telemetry');
      const items = await rows();
      expect(sum(items, 'limit_queued_inflight_cap')).toBe(40);
      expect(sum(items, 'limit_queued_rate_limit')).toBeGreaterThan(0);
      expect(sum(items, 'background_invocations')).toBeGreaterThanOrEqual(10);
      expect(sum(items, 'background_runtime_seconds')).toBeGreaterThanOrEqual(10 * 2);
    } finally {
      delete process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE;
    }
  }, 90_000);

  it('slots a stopped platform never released expire: with 10 past their lifetime, the next invoke prunes them and is accepted', async () => {
    process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';
    try {
      // Wait until the last test's invocations have ended and released their slots.
      for (let i = 0; i < 100; i++) {
        const item = await dynamo().send(
          new GetCommand({ TableName: config.tableName(), Key: keys.functionInflight(teamId), ConsistentRead: true }),
        );
        if (Object.keys(item.Item?.slots ?? {}).length === 0) break;
        await sleep(200);
      }
      const past = Math.floor(Date.now() / 1000) - 1;
      const dead = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`dead-${i}`, past]));
      await dynamo().send(
        new UpdateCommand({
          TableName: config.tableName(),
          Key: keys.functionInflight(teamId),
          UpdateExpression: 'SET slots = :dead',
          ExpressionAttributeValues: { ':dead': dead },
        }),
      );
      const reply = await platform.api('POST', `/api/v1/public/functions/${subdomain}/wait`);
      expect(reply.status).toBe(202);
      const item = await dynamo().send(
        new GetCommand({ TableName: config.tableName(), Key: keys.functionInflight(teamId), ConsistentRead: true }),
      );
      expect(Object.keys(item.Item!.slots).filter((id) => id.startsWith('dead-'))).toEqual([]);
      expect(Object.keys(item.Item!.slots)).toContain(reply.body.data.invocation_id);
    } finally {
      delete process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE;
    }
  }, 60_000);
});

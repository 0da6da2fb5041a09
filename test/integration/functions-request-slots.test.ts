import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createFunctionDoor, type DoorReplyHead } from '../../lib/functions/door.ts';
import type { FunctionHost } from '../../lib/functions/host.ts';
import { waitForRequestSlot } from '../../lib/functions/hosts/cloud/request-slots.ts';
import type { DeployedFunction } from '../../lib/functions/model.ts';
import { MAX_REQUESTS_PER_FUNCTION, releaseRequestSlot, takeRequestSlot } from '../../lib/functions/request-slot-records.ts';
import { withEnv } from '../support/env.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { scaled } from '../support/wait.ts';

/**
 * The HTTPS door's request slots in the cloud (lib/functions/request-slot-records.ts, the cloud host's
 * holdRequestSlot): at most 30 requests of a function at once, as conditional writes on one table item, raced
 * here against the local AWS endpoint. The door is run with a host whose instances count the requests inside
 * them; the synthesized mode shows the same through the router and the user-function Lambdas
 * (functions-door.test.ts).
 */
process.env.FUNCTIONS_BUDGET_MS = '30000';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function slotsHeld(functionId: string): Promise<number> {
  const reply = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.functionRequestSlots(functionId) }));
  return Object.keys((reply.Item?.slots as Record<string, number> | undefined) ?? {}).length;
}

function deployedFunction(): DeployedFunction {
  const id = randomUUID();
  return {
    function_id: id,
    name: 'held',
    project_id: randomUUID(),
    team_id: randomUUID(),
    deployment_id: randomUUID(),
    entry_path: 'functions/held.js',
    bundle_key: `functions/${id}.mjs`,
    bundle_sha256: '0'.repeat(64),
    bundle_bytes: 1,
    created_at: new Date().toISOString(),
    subdomain: 'slots',
    url: 'http://held-slots.fn.localhost/',
  };
}

describe('request slots: 30 per function, conditional writes', () => {
  it('40 racing takes: exactly 30 hold a slot; a released slot is taken again; another function has its own 30', async () => {
    const functionId = randomUUID();
    const ids = Array.from({ length: 40 }, () => randomUUID());
    const taken = await Promise.all(ids.map((id) => takeRequestSlot(functionId, id)));
    expect(MAX_REQUESTS_PER_FUNCTION).toBe(30);
    expect(taken.filter(Boolean).length).toBe(30);
    expect(await slotsHeld(functionId)).toBe(30);
    expect(await takeRequestSlot(functionId, randomUUID())).toBe(false);
    expect(await takeRequestSlot(randomUUID(), randomUUID())).toBe(true);
    await releaseRequestSlot(functionId, ids[taken.indexOf(true)]!);
    expect(await takeRequestSlot(functionId, randomUUID())).toBe(true);
    expect(await slotsHeld(functionId)).toBe(30);
  });

  it('a slot nothing gave back (a router that crashed) is pruned after the budget and its margin by the next taker', async () => {
    const functionId = randomUUID();
    // Taken 91 s ago under a 60 s budget: 60 s and the 30 s margin have passed.
    const longAgo = new Date(Date.now() - 91_000);
    await withEnv({ FUNCTIONS_BUDGET_MS: '60000' }, async () => {
      const taken = await Promise.all(Array.from({ length: 30 }, () => takeRequestSlot(functionId, randomUUID(), longAgo)));
      expect(taken.every(Boolean)).toBe(true);
      expect(await takeRequestSlot(functionId, randomUUID())).toBe(true);
    });
    expect(await slotsHeld(functionId)).toBe(1);
  });

  it('a waiter gets a slot once one is given back; a waiter whose budget ends first takes none', async () => {
    const fn = deployedFunction();
    const releases = await Promise.all(Array.from({ length: 30 }, () => waitForRequestSlot(fn, new AbortController().signal)));
    let waited = false;
    const waiter = waitForRequestSlot(fn, new AbortController().signal).then((release) => ((waited = true), release));
    await sleep(600);
    expect(waited).toBe(false);
    await expect(waitForRequestSlot(fn, AbortSignal.timeout(300))).rejects.toThrow();
    await releases[0]!();
    const release = await waiter;
    expect(await slotsHeld(fn.function_id)).toBe(30);
    await Promise.all([release(), ...releases.slice(1).map((r) => r())]);
    expect(await slotsHeld(fn.function_id)).toBe(0);
  });
});

describe('the door with a host that holds request slots', () => {
  /**
   * A host whose instances count the requests inside them at once. Each request is held until `fullAt` are inside
   * together (a state, not a time: under load the slots' writes can take longer than any fixed hold) and half a
   * second more, in which a cap that let more in would show them; or at most `holdMs`, so that a cap that let fewer
   * in fails on the count instead of hanging.
   */
  function countingHost(fullAt: number, holdMs: number) {
    const seen = { inside: 0, most: 0, total: 0 };
    let opened = () => {};
    const full = new Promise<void>((resolve) => (opened = resolve));
    const host: FunctionHost = {
      holdRequestSlot: waitForRequestSlot,
      async forwardHttp() {
        seen.inside += 1;
        seen.total += 1;
        seen.most = Math.max(seen.most, seen.inside);
        if (seen.inside === fullAt) void sleep(scaled(500)).then(opened);
        await Promise.race([full, sleep(holdMs)]);
        seen.inside -= 1;
        return { outcome: 'response', status: 200, headers: [], body: Buffer.from('held'), coldStart: false, instanceId: 'i' };
      },
      runQueued: () => Promise.reject(new Error('not used')),
    };
    return { host, seen };
  }

  /** The door's whole answer: resolves once `answer` has returned (the slot given back) with what the caller got. */
  async function answerOf(door: ReturnType<typeof createFunctionDoor>): Promise<{ status: number; body: string }> {
    let status = 0;
    const parts: Buffer[] = [];
    await door.answer(
      { hostname: 'held-slots.fn.localhost', method: 'GET', target: '/', headers: [], body: null },
      (head: DoorReplyHead) => {
        status = head.statusCode;
        return new Writable({ write: (chunk, _encoding, done) => (parts.push(chunk as Buffer), done()) });
      },
    );
    return { status, body: Buffer.concat(parts).toString() };
  }

  it(
    '40 requests at once: at most 30 inside the function together, the rest wait for a slot, all 40 answered 200',
    async () => {
      const fn = deployedFunction();
      const { host, seen } = countingHost(MAX_REQUESTS_PER_FUNCTION, scaled(15_000));
      const door = createFunctionDoor({ host, resolve: async () => fn, isEnrolled: async () => true });
      const replies = await Promise.all(Array.from({ length: 40 }, () => answerOf(door)));
      expect(replies.map((r) => r.status)).toEqual(Array(40).fill(200));
      expect(seen.total).toBe(40);
      expect(seen.most).toBe(30);
      expect(await slotsHeld(fn.function_id)).toBe(0);
    },
    scaled(60_000),
  );

  it('a request whose budget ends while it waits for a slot gets 504 FUNCTION_TIMEOUT and never reaches the function', async () => {
    const fn = deployedFunction();
    const { host, seen } = countingHost(1, 0);
    const held = await Promise.all(Array.from({ length: 30 }, () => waitForRequestSlot(fn, new AbortController().signal)));
    const door = createFunctionDoor({ host, resolve: async () => fn, isEnrolled: async () => true });
    const reply = await withEnv({ FUNCTIONS_BUDGET_MS: '700' }, () => answerOf(door));
    expect(reply.status).toBe(504);
    expect(JSON.parse(reply.body)).toMatchObject({
      code: 'FUNCTION_TIMEOUT',
      error: 'The function did not answer within its time budget.',
      details: null,
    });
    expect(seen.total).toBe(0);
    expect(await slotsHeld(fn.function_id)).toBe(30);
    await Promise.all(held.map((release) => release()));
  });
});

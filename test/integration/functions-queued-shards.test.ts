import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { queryAll } from '../../lib/db/query.ts';
import { reclaimOpenInvocations } from '../../lib/functions/invocation-reclaim.ts';
import { OPEN_INVOCATION_SHARDS, openInvocationShard } from '../../lib/functions/invocation-records.ts';
import { INVOCATION_ERRORS } from '../../lib/functions/invocations.ts';
import { queuedRuntime } from '../../lib/local/queued-runtime.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * The open invocations' index is write-sharded (OPEN_INVOCATION_SHARDS partitions `OPENINVOCATIONS#{shard}`,
 * by invocation id), so no single partition takes every invocation's two index writes; the reclaim after a
 * restart reads every shard, and the partition records of before the sharding sit in. The in-flight cap stays
 * exact when invokes race. The queue is paused here: the invocations stay pending.
 */
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';

let platform: TestPlatform;
const runtime = queuedRuntime();
const teams: { subdomain: string }[] = [];

beforeAll(async () => {
  // A platform of its own: the queued runtime stays paused while the shards fill, which would stall other files.
  platform = await startTestPlatform({ drivers: [() => runtime] });
  runtime.pause();
  for (let i = 0; i < 4; i++) {
    const roles = await makeTeamWithRoles();
    await setFunctionsEnrolment(roles.team.id, true);
    const subdomain = `shard-${randomBytes(3).toString('hex')}`;
    await deploy(
      platform,
      roles.owner.token,
      site({ 'index.html': '<h1>shards</h1>', 'functions/hello.js': `export default () => new Response('hi');` }),
      {
        name: `Shards ${subdomain}`,
        subdomain,
      },
    );
    teams.push({ subdomain });
  }
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

const openIn = async (partition: string) =>
  queryAll<{ id: string }>({
    TableName: config.tableName(),
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': partition },
  });

describe('open invocations, sharded', () => {
  it('races invokes to exactly 10 in flight per team, spreads the open ones over the shards, and the reclaim ends every one (a record of before the sharding too)', async () => {
    const ids: string[] = [];
    for (const { subdomain } of teams) {
      const replies = await Promise.all(
        Array.from({ length: 25 }, () => platform.api('POST', `/api/v1/public/functions/${subdomain}/hello`)),
      );
      const accepted = replies.filter((r) => r.status === 202);
      expect(accepted).toHaveLength(10);
      for (const r of replies) if (r.status !== 202) expect(r.body.code).toBe('TOO_MANY_CONCURRENT_INVOCATIONS');
      ids.push(...accepted.map((r) => r.body.data.invocation_id as string));
    }

    const byShard = new Map<number, string[]>();
    for (let shard = 0; shard < OPEN_INVOCATION_SHARDS; shard++) {
      const items = (await openIn(`OPENINVOCATIONS#${shard}`)).filter((item) => ids.includes(item.id as string));
      for (const item of items) expect(openInvocationShard(item.id as string)).toBe(shard);
      byShard.set(
        shard,
        items.map((item) => item.id as string),
      );
    }
    expect([...byShard.values()].flat().sort()).toEqual([...ids].sort());
    // 40 random ids over 16 shards: many partitions, none holding most of them.
    expect([...byShard.values()].filter((list) => list.length > 0).length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...[...byShard.values()].map((list) => list.length))).toBeLessThan(20);

    // One open record as the code before the sharding wrote it: the single partition.
    const legacy = ids[0]!;
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.invocation(legacy),
        UpdateExpression: 'SET gsi2pk = :p',
        ExpressionAttributeValues: { ':p': 'OPENINVOCATIONS' },
      }),
    );
    expect((await openIn('OPENINVOCATIONS')).map((item) => item.id)).toContain(legacy);

    expect(await reclaimOpenInvocations((record) => ids.includes(record.id))).toBe(40);
    for (const id of ids) {
      const item = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.invocation(id), ConsistentRead: true })))
        .Item!;
      expect(item).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.reclaimedPending });
      expect(item.gsi2pk).toBeUndefined();
    }
    // Their slots were released: each team may invoke again.
    for (const { subdomain } of teams) expect((await platform.api('POST', `/api/v1/public/functions/${subdomain}/hello`)).status).toBe(202);
  }, 120_000);
});

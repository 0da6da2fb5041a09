import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Retention of queued invocations with a shortened clock: the spec keeps
 * request, result and console output 7 days, then deletes them. The record
 * carries the table's TTL attribute at that time (DynamoDB deletes it; the
 * objects go by the bucket's `invocations/` lifecycle rule, checked in
 * test/infra/stack.test.ts), and no read serves it once it has passed, since
 * DynamoDB deletes expired items only eventually.
 */
// Long enough for the run and the member's read to finish before it, on a loaded 2-core machine (2.5 s was not).
const RETENTION_MS = 10_000;
process.env.FUNCTIONS_INVOCATION_RETENTION_MS = String(RETENTION_MS);
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let platform: TestPlatform;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let subdomain: string;
let projectId: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  subdomain = `ret-${randomBytes(3).toString('hex')}`;
  const deployed = await deploy(
    platform,
    roles.owner.token,
    site({
      'index.html': '<h1>r</h1>',
      'functions/hello.js': `export default () => { console.log('kept a while'); return new Response('hi'); };`,
    }),
    { name: `Retention ${subdomain}`, subdomain },
  );
  projectId = deployed.begin.project_id;
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

describe('queued invocation retention', () => {
  it('the record carries the TTL of the retention; after it the poll, the member view and the listing no longer have it', async () => {
    const before = Date.now();
    const reply = await platform.api('POST', `/api/v1/public/functions/${subdomain}/hello`);
    expect(reply.status).toBe(202);
    const { invocation_id: id, poll_url } = reply.body.data;
    let status = 'pending';
    while (status !== 'completed') {
      await sleep(100);
      status = (await platform.api('GET', poll_url)).body.data.status;
    }
    const item = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.invocation(id), ConsistentRead: true })))
      .Item!;
    expect(item.ttl * 1000).toBeGreaterThanOrEqual(Math.floor((before + RETENTION_MS) / 1000) * 1000);
    expect(item.ttl * 1000).toBeLessThanOrEqual(Date.now() + RETENTION_MS);
    const member = `/api/v1/projects/${projectId}/functions/hello/invocations/${id}`;
    expect((await platform.api('GET', member, { token: roles.member.token })).body.data.console).toContainEqual(
      expect.objectContaining({ line: 'kept a while' }),
    );

    // The retention passes: the record's TTL is moved to a second ago, as the clock would move past it (every read
    // compares the TTL with the time of the read; DynamoDB's own deletion is eventual and not awaited either way).
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.invocation(id),
        UpdateExpression: 'SET #ttl = :past',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    expect((await platform.api('GET', poll_url)).status).toBe(404);
    expect((await platform.api('GET', member, { token: roles.member.token })).status).toBe(404);
    const list = await platform.api('GET', `/api/v1/projects/${projectId}/functions/hello/invocations`, { token: roles.member.token });
    expect(list.body.data.invocations).toEqual([]);
  }, 30_000);
});

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { expectEnvelopeError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Idempotency-Key on the public queued POST: within 24 h a repeat of the same
 * request (method, query, body) under the same key of the same function
 * answers the first invocation's 202 and makes none; another request under
 * the key is 422 IDEMPOTENCY_KEY_REUSED; a malformed key 400
 * IDEMPOTENCY_KEY_INVALID. Keys are claimed by a conditional write, so POSTs
 * racing with one key make one invocation.
 */
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';

let platform: TestPlatform;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let subdomain: string;
let projectId: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  subdomain = `idem-${randomBytes(3).toString('hex')}`;
  const deployed = await deploy(
    platform,
    roles.owner.token,
    site({
      'index.html': '<h1>keys</h1>',
      'functions/echo.js': `export default async (request) => new Response(await request.text());`,
      'functions/other.js': `export default () => new Response('other');`,
    }),
    { name: `Idem ${subdomain}`, subdomain },
  );
  projectId = deployed.begin.project_id;
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

const invoke = (name: string, key: string | null, init: { query?: string; body?: string } = {}) =>
  platform.api('POST', `/api/v1/public/functions/${subdomain}/${name}${init.query ? `?${init.query}` : ''}`, {
    rawBody: init.body,
    headers: { 'content-type': 'text/plain', ...(key === null ? {} : { 'idempotency-key': key }) },
  });

async function invocationIds(name: string): Promise<string[]> {
  const reply = await platform.api('GET', `/api/v1/projects/${projectId}/functions/${name}/invocations`, { token: roles.owner.token });
  expect(reply.status).toBe(200);
  return reply.body.data.invocations.map((i: { id: string }) => i.id);
}

describe('Idempotency-Key on the queued door', () => {
  it('the same request under the same key answers the first 202 (id and poll_url) and makes no second invocation', async () => {
    const key = `order-${randomUUID()}`;
    const first = await invoke('echo', key, { query: 'a=1', body: 'hello' });
    expect(first.status).toBe(202);
    const { invocation_id } = first.body.data;
    expect(first.body.data).toEqual({
      invocation_id,
      status: 'pending',
      poll_url: `/api/v1/public/functions/${subdomain}/echo/invocations/${invocation_id}`,
    });
    const again = await invoke('echo', key, { query: 'a=1', body: 'hello' });
    expect(again.status).toBe(202);
    expect(again.body.data).toEqual(first.body.data);
    expect((await invocationIds('echo')).filter((id) => id === invocation_id)).toHaveLength(1);
    expect(await invocationIds('echo')).toHaveLength(1);

    // The key's record: the hash of the request, kept 24 hours (the table's TTL).
    const keyHash = createHash('sha256').update(`function:${projectId}:echo\n${key}`).digest('hex');
    const record = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.idempotency(roles.team.id, keyHash) }));
    expect(record.Item).toMatchObject({
      state: 'completed',
      stored: { invocation_id },
      request_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(record.Item!.ttl - Math.floor(Date.parse(record.Item!.created_at) / 1000)).toBe(24 * 3600);
    expect(JSON.stringify(record.Item)).not.toContain('hello');
  });

  it('another body or query under the key is 422 IDEMPOTENCY_KEY_REUSED and makes nothing; another function has keys of its own', async () => {
    const key = `k-${randomUUID()}`;
    const first = await invoke('echo', key, { query: 'x=1', body: 'one' });
    expect(first.status).toBe(202);
    const before = await invocationIds('echo');
    for (const init of [{ query: 'x=1', body: 'two' }, { query: 'x=2', body: 'one' }, { body: 'one' }]) {
      const reused = await invoke('echo', key, init);
      expectEnvelopeError(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
      expect(reused.body.error).toBe('This Idempotency-Key was already used with a different request. Send a new key for a new request.');
    }
    expect(await invocationIds('echo')).toEqual(before);

    const other = await invoke('other', key, { query: 'x=1', body: 'one' });
    expect(other.status).toBe(202);
    expect(other.body.data.invocation_id).not.toBe(first.body.data.invocation_id);
    expect(await invocationIds('other')).toEqual([other.body.data.invocation_id]);
  });

  it('a malformed key is 400 IDEMPOTENCY_KEY_INVALID and makes nothing; 255 visible ASCII characters pass', async () => {
    const before = await invocationIds('echo');
    for (const bad of ['', 'with space', 'x'.repeat(256), 'tab\tkey', 'caf\u00e9']) {
      const reply = await invoke('echo', bad, { body: 'b' });
      expectEnvelopeError(reply, 400, 'IDEMPOTENCY_KEY_INVALID');
      expect(reply.body.error).toBe('The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
    }
    expect(await invocationIds('echo')).toEqual(before);
    const longest = await invoke('echo', `~${'A'.repeat(253)}!`, { body: 'b' });
    expect(longest.status).toBe(202);
  });

  it('ten POSTs at once with one key: one invocation, every reply its 202', async () => {
    const key = `race-${randomUUID()}`;
    const before = new Set(await invocationIds('echo'));
    const replies = await Promise.all(Array.from({ length: 10 }, () => invoke('echo', key, { body: 'raced' })));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(202));
    const ids = new Set(replies.map((r) => r.body.data.invocation_id));
    expect(ids.size).toBe(1);
    const made = (await invocationIds('echo')).filter((id) => !before.has(id));
    expect(made).toEqual([...ids]);
  });

  it('without a key every POST is a new invocation', async () => {
    const [a, b] = await Promise.all([invoke('other', null), invoke('other', null)]);
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(a.body.data.invocation_id).not.toBe(b.body.data.invocation_id);
  });
});

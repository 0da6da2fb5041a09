import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqs } from '../../lib/aws/sqs.ts';
import { config } from '../../lib/config.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { expectEnvelopeError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Completion callbacks of the queued door: `X-Callback-Url` on the POST, the
 * signed POST of the poll reply's data once the invocation is terminal, its
 * retries on the callbacks queue (delays shortened here), the project's
 * callback secret, and the members' view of the delivery. Receivers listen on
 * loopback, which FUNCTIONS_CALLBACK_ALLOW_LOOPBACK=1 allows; the refusal of
 * private addresses at delivery is tested in a network namespace
 * (functions-callbacks-netns.test.ts).
 */
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';
process.env.FUNCTIONS_CALLBACK_ALLOW_LOOPBACK = '1';
process.env.FUNCTIONS_CALLBACK_RETRY_DELAYS_SECONDS = '0,0,0,0,0';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Received {
  at: number;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A receiver on loopback answering each request with the next of `statuses` (the last one repeats). */
async function receiver(statuses: number[], headers: Record<string, string> = {}) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ at: Date.now(), method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(statuses[Math.min(received.length - 1, statuses.length - 1)]!, headers).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(server);
  return { received, origin };
}

const servers: Server[] = [];
let platform: TestPlatform;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let subdomain: string;
let projectId: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  subdomain = `cb-${randomBytes(3).toString('hex')}`;
  const deployed = await deploy(
    platform,
    roles.owner.token,
    site({
      'index.html': '<h1>callbacks</h1>',
      'functions/hello.js': `export default async (request) => new Response('hello ' + (await request.text()), { status: 201, headers: { 'x-made': 'yes' } });`,
    }),
    { name: `Callbacks ${subdomain}`, subdomain },
  );
  projectId = deployed.begin.project_id;
}, 120_000);
afterAll(async () => {
  for (const server of servers) server.close();
  await platform?.stop();
});

const invoke = (callbackUrl: string | null, body = 'world') =>
  platform.api('POST', `/api/v1/public/functions/${subdomain}/hello`, {
    rawBody: body,
    headers: { 'content-type': 'text/plain', ...(callbackUrl === null ? {} : { 'x-callback-url': callbackUrl }) },
  });

const memberView = async (id: string) => {
  const reply = await platform.api('GET', `/api/v1/projects/${projectId}/functions/hello/invocations/${id}`, { token: roles.member.token });
  expect(reply.status).toBe(200);
  return reply.body.data;
};

/** Waits until the invocation's callback has had `attempts` attempts (the members' view). */
async function untilAttempts(id: string, attempts: number, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await memberView(id);
    if (view.callback.attempts >= attempts) return view;
    if (Date.now() > deadline) throw new Error(`callback attempts ${view.callback.attempts}, waited for ${attempts}`);
    await sleep(100);
  }
}

/** Waits until the callbacks queue holds nothing, visible, delayed or in flight: no attempt is left to come. */
async function untilCallbacksQueueEmpty() {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { Attributes = {} } = await sqs().send(
      new GetQueueAttributesCommand({
        QueueUrl: config.queueUrl('callbacks'),
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    if (Object.values(Attributes).every((n) => n === '0')) return;
    if (Date.now() > deadline) throw new Error(`callbacks queue not empty: ${JSON.stringify(Attributes)}`);
    await sleep(100);
  }
}

const secretOf = async () => {
  const reply = await platform.api('GET', `/api/v1/projects/${projectId}/functions/callback-secret`, { token: roles.admin.token });
  expect(reply.status).toBe(200);
  return reply.body.data.secret as string;
};

function verify(secret: string, received: Received) {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(received.headers['x-slipway-signature']));
  expect(match).not.toBeNull();
  const expected = createHmac('sha256', secret).update(`${match![1]}.${received.body}`).digest('hex');
  expect(match![2]).toBe(expected);
  expect(Math.abs(Number(match![1]) - received.at / 1000)).toBeLessThan(60);
}

describe('completion callbacks', () => {
  it('a terminal invocation POSTs the poll reply’s data, signed with the project’s secret; members see the delivery, the public poll never does', async () => {
    const hook = await receiver([200]);
    const reply = await invoke(`${hook.origin}/hooks/done?tag=a%20b`);
    expect(reply.status).toBe(202);
    const id = reply.body.data.invocation_id;
    const view = await untilAttempts(id, 1);
    expect(hook.received).toHaveLength(1);
    const [got] = hook.received;
    expect(got!.method).toBe('POST');
    expect(got!.url).toBe('/hooks/done?tag=a%20b');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-slipway-invocation-id']).toBe(id);
    expect(got!.headers['user-agent']).toBe('Slipway-Callbacks/1');

    // The body is the public poll reply's data, exactly.
    const poll = await platform.api('GET', reply.body.data.poll_url);
    expect(JSON.parse(got!.body)).toEqual(poll.body.data);
    expect(poll.body.data).toMatchObject({ id, status: 'completed', response_status: 201, response_headers: { 'x-made': 'yes' } });
    expect(Buffer.from(poll.body.data.response_body, 'base64').toString()).toBe('hello world');
    expect(JSON.stringify(poll.body)).not.toContain('hooks/done');
    expect(poll.body.data.callback).toBeUndefined();

    // The first delivery made the secret; the admin's first read answers that same one.
    verify(await secretOf(), got!);
    expect(view.callback).toEqual({
      url: `${hook.origin}/hooks/done?tag=a%20b`,
      attempts: 1,
      last_status: 200,
      last_error: null,
      delivered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('no 2xx: retried after the configured delays until a 2xx (500, then 200), the same body each time', async () => {
    process.env.FUNCTIONS_CALLBACK_RETRY_DELAYS_SECONDS = '1,0,0,0,0';
    try {
      const hook = await receiver([500, 200]);
      const id = (await invoke(`${hook.origin}/retry`)).body.data.invocation_id;
      const view = await untilAttempts(id, 2);
      expect(view.callback).toMatchObject({ attempts: 2, last_status: 200, last_error: null, delivered_at: expect.any(String) });
      await untilCallbacksQueueEmpty();
      expect(hook.received).toHaveLength(2);
      expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
      expect(hook.received[1]!.headers['x-slipway-invocation-id']).toBe(id);
      // The retry is an SQS message delayed by the first delay (1 s here).
      expect(hook.received[1]!.at - hook.received[0]!.at).toBeGreaterThanOrEqual(900);
      const secret = await secretOf();
      for (const got of hook.received) verify(secret, got);
    } finally {
      process.env.FUNCTIONS_CALLBACK_RETRY_DELAYS_SECONDS = '0,0,0,0,0';
    }
  });

  it('6 attempts at most; a redirect is an attempt that failed and is never followed', async () => {
    const target = await receiver([200]);
    const hook = await receiver([302], { location: `${target.origin}/elsewhere` });
    const id = (await invoke(`${hook.origin}/moved`)).body.data.invocation_id;
    const view = await untilAttempts(id, 6);
    await untilCallbacksQueueEmpty();
    expect(hook.received).toHaveLength(6);
    expect(target.received).toHaveLength(0);
    expect(view.callback).toEqual({
      url: `${hook.origin}/moved`,
      attempts: 6,
      last_status: 302,
      last_error: 'The receiver answered 302, a redirect, which is not followed.',
      delivered_at: null,
    });
  });

  it('an unreachable receiver is an attempt with no status', async () => {
    const hook = await receiver([200]);
    const closed = hook.origin;
    servers.pop()!.close();
    const id = (await invoke(`${closed}/gone`)).body.data.invocation_id;
    const view = await untilAttempts(id, 6);
    expect(view.callback).toMatchObject({
      attempts: 6,
      last_status: null,
      last_error: 'The receiver could not be reached.',
      delivered_at: null,
    });
  });

  it('a bad X-Callback-Url is 400 CALLBACK_URL_INVALID with its reason, and no invocation is made', async () => {
    const list = async () =>
      (await platform.api('GET', `/api/v1/projects/${projectId}/functions/hello/invocations`, { token: roles.owner.token })).body.data
        .invocations.length;
    const before = await list();
    const cases: [string, string, string][] = [
      ['not a url', 'not_a_url', 'The callback URL is not an absolute URL.'],
      ['ftp://127.0.0.1/x', 'scheme_not_allowed', 'The callback URL must be an https:// address.'],
      [`https://127.0.0.1/${'x'.repeat(2031)}`, 'too_long', 'The callback URL is over 2,048 characters.'],
      ['https://user:pw@127.0.0.1/', 'credentials_in_url', 'The callback URL must not contain a user name or password.'],
      ['https://10.1.2.3/hook', 'private_address', 'The callback URL resolves to a private network address, which is never called.'],
      [
        'http://169.254.169.254/latest',
        'metadata_address',
        'The callback URL resolves to a cloud metadata address, which is never called.',
      ],
      [
        'https://[::ffff:192.168.0.1]/',
        'private_address',
        'The callback URL resolves to a private network address, which is never called.',
      ],
      ['https://[fe80::1]/', 'link_local_address', 'The callback URL resolves to a link-local address, which is never called.'],
    ];
    for (const [url, reason, sentence] of cases) {
      const reply = await invoke(url);
      expect([url, reply.status, reply.body.details, reply.body.error]).toEqual([url, 400, { reason }, sentence]);
      expectEnvelopeError(reply, 400, 'CALLBACK_URL_INVALID');
    }
    // 2,048 characters pass (on loopback, allowed here).
    const hook = await receiver([200]);
    const longest = `${hook.origin}/${'y'.repeat(2048 - hook.origin.length - 1)}`;
    expect(longest).toHaveLength(2048);
    expect((await invoke(longest)).status).toBe(202);
    expect(await list()).toBe(before + 1);

    // Without the local setting, loopback is refused: http:// as not https, https:// as loopback.
    process.env.FUNCTIONS_CALLBACK_ALLOW_LOOPBACK = '0';
    try {
      expect((await invoke(`${hook.origin}/x`)).body.details).toEqual({ reason: 'http_not_allowed' });
      expect((await invoke('https://127.0.0.1/x')).body.details).toEqual({ reason: 'loopback_address' });
      expect((await invoke('https://localhost/x')).body.details).toEqual({ reason: 'loopback_address' });
    } finally {
      process.env.FUNCTIONS_CALLBACK_ALLOW_LOOPBACK = '1';
    }
    expect(await list()).toBe(before + 1);
  });
});

describe('the callback secret', () => {
  it('team admins read it (made once: two first reads at once get the same), members get 403, outsiders 404; rotate replaces it', async () => {
    const other = `cs-${randomBytes(3).toString('hex')}`;
    const fresh = (
      await deploy(platform, roles.owner.token, site({ 'index.html': '<p>s</p>' }), { name: `Secret ${other}`, subdomain: other })
    ).begin.project_id;
    const path = `/api/v1/projects/${fresh}/functions/callback-secret`;
    const [a, b, c] = await Promise.all([
      platform.api('GET', path, { token: roles.admin.token }),
      platform.api('GET', path, { token: roles.owner.token }),
      platform.api('GET', path, { token: roles.admin.token }),
    ]);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect(Object.keys(a.body.data)).toEqual(['secret']);
    expect(a.body.data.secret.length).toBeGreaterThanOrEqual(32);
    expect(b.body.data.secret).toBe(a.body.data.secret);
    expect(c.body.data.secret).toBe(a.body.data.secret);

    expectEnvelopeError(await platform.api('GET', path, { token: roles.member.token }), 403, 'FORBIDDEN');
    expectEnvelopeError(await platform.api('POST', `${path}/rotate`, { token: roles.member.token }), 403, 'FORBIDDEN');
    expectEnvelopeError(await platform.api('GET', path, { token: roles.outsider.token }), 404, 'PROJECT_NOT_FOUND');

    const rotated = await platform.api('POST', `${path}/rotate`, { token: roles.admin.token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).not.toBe(a.body.data.secret);
    expect(rotated.body.data.secret.length).toBeGreaterThanOrEqual(32);
    expect((await platform.api('GET', path, { token: roles.admin.token })).body.data.secret).toBe(rotated.body.data.secret);
  });

  it('deliveries after a rotation are signed with the new secret', async () => {
    const rotated = await platform.api('POST', `/api/v1/projects/${projectId}/functions/callback-secret/rotate`, {
      token: roles.owner.token,
    });
    const hook = await receiver([204]);
    const id = (await invoke(`${hook.origin}/after-rotate`)).body.data.invocation_id;
    await untilAttempts(id, 1);
    verify(rotated.body.data.secret, hook.received[0]!);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { getUser } from '../../lib/users/user-records.ts';
import { startLocalPlatform, type LocalPlatform } from '../../lib/local/platform.ts';
import { makeTeamWithRoles, makeUser } from '../support/platform.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: LocalPlatform;
const RESEND = '/api/v1/me/email-verification/resend';
const CONFIRM = '/api/v1/email-verification/confirm';

/**
 * This file runs on a moto_server of its own rather than the run's shared one:
 * sent mail is read from moto's inspection API, which serializes every object
 * moto holds (other files' S3 uploads included) and would crawl on the shared one.
 */
beforeAll(async () => {
  platform = await startLocalPlatform({ port: 0, prefix: `t${randomBytes(5).toString('hex')}`, drivers: [] });
});
afterAll(() => platform?.stop());

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/**
 * Calls the local API from a chosen loopback address (all of 127/8 is
 * loopback), so each test has its own IP address allowance and the
 * per-IP limit can be reached by several users from one address.
 */
let nextIp = 10;
const freshIp = () => `127.0.0.${nextIp++}`;
function apiFrom(ip: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Reply> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const url = new URL(path, platform.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: url.pathname,
        method,
        localAddress: ip,
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

interface SentMail {
  source: string;
  subject: string;
  body: string;
  destinations: { ToAddresses?: string[] };
}

/** What moto's SES recorded as sent (its inspection API), to one address. */
async function mailTo(address: string): Promise<SentMail[]> {
  const data = (await (await fetch(`${platform.awsEndpoint}/moto-api/data.json`)).json()) as { ses?: { Message?: SentMail[] } };
  return (data.ses?.Message ?? []).filter((m) => m.destinations.ToAddresses?.includes(address));
}

function tokenOf(mail: SentMail): string {
  const link = /https?:\/\/\S+/.exec(mail.body)![0];
  return new URL(link).searchParams.get('token')!;
}

/** Fixed one-hour windows: keep a burst of requests from straddling two of them. */
async function clearOfHourBoundary() {
  const toNextHour = 3600 - (Math.floor(Date.now() / 1000) % 3600);
  if (toNextHour < 15) await new Promise((r) => setTimeout(r, toNextHour * 1000 + 500));
}

describe('POST /api/v1/me/email-verification/resend: authorization matrix', () => {
  it('401 without a token; 403 SESSION_REQUIRED for an API key', async () => {
    const m = await makeTeamWithRoles();
    const ip = freshIp();
    expectError(await apiFrom(ip, 'POST', RESEND), 401, 'UNAUTHENTICATED');
    expectError(await apiFrom(ip, 'POST', RESEND, { token: `slw_s_${'C'.repeat(43)}` }), 401, 'UNAUTHENTICATED');
    const key = await apiFrom(ip, 'POST', RESEND, { token: m.apiKey.token });
    expectError(key, 403, 'SESSION_REQUIRED');
    expect(key.body.error).toBe('This action needs a signed-in user; API keys are refused.');
  });

  it('200 sent for every signed-in user, whatever their team or role: owner, admin, member, other team, platform admin', async () => {
    const m = await makeTeamWithRoles();
    const ip = freshIp();
    for (const who of ['owner', 'admin', 'member', 'outsider', 'platformAdmin'] as const) {
      const reply = await apiFrom(ip, 'POST', RESEND, { token: m[who].token });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({ status: 'sent' });
      expect(await mailTo(m[who].user.email)).toHaveLength(1);
    }
  });
});

describe('confirmation link', () => {
  it('goes to the account address (never one from the request), confirms once, then resend answers already_confirmed', async () => {
    const { user, token } = await makeUser({ name: 'Ada' });
    const ip = freshIp();
    const reply = await apiFrom(ip, 'POST', RESEND, { token, body: { email: 'attacker@evil.test' } });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ status: 'sent' });
    expect(await mailTo('attacker@evil.test')).toHaveLength(0);

    const [mail] = await mailTo(user.email);
    expect(mail!.source).toBe('no-reply@slipway.localhost');
    expect(mail!.subject).toBe('Confirm your e-mail address');
    expect(mail!.body).toContain('Hello Ada,');
    expect(mail!.body).toContain('expires in 24 hours');
    expect(mail!.body).toMatch(/https:\/\/app\.slipway\.site\/confirm-email\?token=[A-Za-z0-9_-]{43}/);

    const confirmToken = tokenOf(mail!);
    const confirmed = await apiFrom(ip, 'POST', CONFIRM, { body: { token: confirmToken } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data).toEqual({ status: 'confirmed', email: user.email });
    expect(await getUser(user.user_id)).toMatchObject({ email_verified: true });

    expectError(await apiFrom(ip, 'POST', CONFIRM, { body: { token: confirmToken } }), 400, 'EMAIL_CONFIRMATION_INVALID');

    const again = await apiFrom(ip, 'POST', RESEND, { token });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ status: 'already_confirmed' });
    expect(await mailTo(user.email)).toHaveLength(1);
  });

  it('only a hash of the link token is stored, with a 24-hour expiry', async () => {
    const { user, token } = await makeUser();
    const before = Date.now();
    await apiFrom(freshIp(), 'POST', RESEND, { token });
    const linkToken = tokenOf((await mailTo(user.email))[0]!);
    const byToken = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.emailConfirmation(linkToken) }));
    expect(byToken.Item).toBeUndefined();
    const hash = createHash('sha256').update(linkToken).digest('hex');
    const stored = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.emailConfirmation(hash) }))).Item!;
    expect(stored).toMatchObject({ user_id: user.user_id, email: user.email });
    expect(JSON.stringify(stored)).not.toContain(linkToken);
    const lifetime = Date.parse(stored.expires_at) - before;
    expect(lifetime).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);
    expect(stored.ttl).toBe(Math.floor(Date.parse(stored.expires_at) / 1000));
  });

  it('racing confirms of one link: one 200, the rest 400 EMAIL_CONFIRMATION_INVALID', async () => {
    const { user, token } = await makeUser();
    const ip = freshIp();
    await apiFrom(ip, 'POST', RESEND, { token });
    const linkToken = tokenOf((await mailTo(user.email))[0]!);
    const replies = await Promise.all(Array.from({ length: 5 }, () => apiFrom(ip, 'POST', CONFIRM, { body: { token: linkToken } })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    const refused = replies.filter((r) => r.status === 400);
    expect(refused).toHaveLength(4);
    for (const r of refused) expectError(r, 400, 'EMAIL_CONFIRMATION_INVALID');
  });

  it('an expired, unknown or malformed token is 400 EMAIL_CONFIRMATION_INVALID and confirms nothing', async () => {
    const { user } = await makeUser();
    const expiredToken = 'E'.repeat(43);
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: {
          ...keys.emailConfirmation(createHash('sha256').update(expiredToken).digest('hex')),
          type: 'email_confirmation',
          user_id: user.user_id,
          email: user.email,
          created_at: new Date(Date.now() - 25 * 3_600_000).toISOString(),
          expires_at: new Date(Date.now() - 3_600_000).toISOString(),
        },
      }),
    );
    const ip = freshIp();
    for (const t of [expiredToken, 'F'.repeat(43), 'short', '../../etc']) {
      const reply = await apiFrom(ip, 'POST', CONFIRM, { body: { token: t } });
      expectError(reply, 400, 'EMAIL_CONFIRMATION_INVALID');
      expect(reply.body.error).toBe('This confirmation link is invalid, expired or already used.');
    }
    expectError(await apiFrom(ip, 'POST', CONFIRM, { body: {} }), 400, 'VALIDATION_FAILED');
    expectError(await apiFrom(ip, 'POST', CONFIRM), 400, 'VALIDATION_FAILED');
    expect(await getUser(user.user_id)).toMatchObject({ email_verified: false });
  });

  it('a link sent before the account address changed does not confirm the new address', async () => {
    const { user, token } = await makeUser();
    await apiFrom(freshIp(), 'POST', RESEND, { token });
    const linkToken = tokenOf((await mailTo(user.email))[0]!);
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: { ...keys.user(user.user_id), type: 'user', ...user, email: `changed-${user.email}` },
      }),
    );
    expectError(await apiFrom(freshIp(), 'POST', CONFIRM, { body: { token: linkToken } }), 400, 'EMAIL_CONFIRMATION_INVALID');
    expect(await getUser(user.user_id)).toMatchObject({ email_verified: false });
  });
});

describe('resend limits: 3 per account and 10 per IP address per hour', () => {
  it('6 parallel resends by one account: exactly 3 sent, 3 refused with 429 and Retry-After', async () => {
    await clearOfHourBoundary();
    const { user, token } = await makeUser();
    const ip = freshIp();
    const replies = await Promise.all(Array.from({ length: 6 }, () => apiFrom(ip, 'POST', RESEND, { token })));
    const sent = replies.filter((r) => r.status === 200);
    expect(sent).toHaveLength(3);
    for (const r of sent) expect(r.body.data).toEqual({ status: 'sent' });
    const limited = replies.filter((r) => r.status === 429);
    expect(limited).toHaveLength(3);
    for (const r of limited) {
      expectError(r, 429, 'EMAIL_RESEND_LIMITED');
      expect(r.body.error).toBe('Too many confirmation e-mails requested. Try again later.');
      const retryAfter = Number(r.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(r.body.details).toEqual({ limit: 'account', max_per_hour: 3, retry_after_seconds: retryAfter });
    }
    expect(await mailTo(user.email)).toHaveLength(3);
    // The account limit follows the account to another address too.
    expectError(await apiFrom(freshIp(), 'POST', RESEND, { token }), 429, 'EMAIL_RESEND_LIMITED');
  });

  it('several users from one IP address: exactly 10 sent, then 429 for anyone from that address', async () => {
    await clearOfHourBoundary();
    const users = await Promise.all(Array.from({ length: 4 }, () => makeUser()));
    const ip = freshIp();
    // 4 users x 3 resends = 12 requests, all within each account's allowance: only the IP limit bites.
    const replies = await Promise.all(users.flatMap((u) => [0, 1, 2].map(() => apiFrom(ip, 'POST', RESEND, { token: u.token }))));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    const limited = replies.filter((r) => r.status === 429);
    expect(limited).toHaveLength(2);
    for (const r of limited) {
      expectError(r, 429, 'EMAIL_RESEND_LIMITED');
      expect(r.body.details).toMatchObject({ limit: 'ip_address', max_per_hour: 10 });
      expect(Number(r.headers['retry-after'])).toBe(r.body.details.retry_after_seconds);
    }
    const mails = (await Promise.all(users.map((u) => mailTo(u.user.email)))).flat();
    expect(mails).toHaveLength(10);

    const newcomer = await makeUser();
    expectError(await apiFrom(ip, 'POST', RESEND, { token: newcomer.token }), 429, 'EMAIL_RESEND_LIMITED');
    // The same newcomer from another address is served: the refusal was the address's.
    const elsewhere = await apiFrom(freshIp(), 'POST', RESEND, { token: newcomer.token });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.data).toEqual({ status: 'sent' });
  });

  it('already_confirmed uses none of the allowance', async () => {
    const { user, token } = await makeUser();
    const ip = freshIp();
    await apiFrom(ip, 'POST', RESEND, { token });
    await apiFrom(ip, 'POST', CONFIRM, { body: { token: tokenOf((await mailTo(user.email))[0]!) } });
    const replies = await Promise.all(Array.from({ length: 5 }, () => apiFrom(ip, 'POST', RESEND, { token })));
    expect(replies.map((r) => r.body.data?.status)).toEqual(Array(5).fill('already_confirmed'));
  });
});

describe('e-mail delivery failure', () => {
  it('503 EMAIL_DELIVERY_UNAVAILABLE when SES refuses, and the allowance is given back', async () => {
    await clearOfHourBoundary();
    const { user, token } = await makeUser();
    const ip = freshIp();
    const saved = process.env.MAIL_FROM;
    // An unverified sender: SES answers MessageRejected, as it would for a suspended or misconfigured identity.
    process.env.MAIL_FROM = 'no-reply@unverified.example';
    try {
      for (let i = 0; i < 3; i++) {
        const reply = await apiFrom(ip, 'POST', RESEND, { token });
        expectError(reply, 503, 'EMAIL_DELIVERY_UNAVAILABLE');
        expect(reply.body.error).toBe('E-mail delivery is temporarily unavailable. Try again later.');
      }
    } finally {
      if (saved === undefined) delete process.env.MAIL_FROM;
      else process.env.MAIL_FROM = saved;
    }
    expect(await mailTo(user.email)).toHaveLength(0);
    // The three failures used nothing: three sends still go out.
    for (let i = 0; i < 3; i++) expect((await apiFrom(ip, 'POST', RESEND, { token })).body.data).toEqual({ status: 'sent' });
    expect(await mailTo(user.email)).toHaveLength(3);
  });
});

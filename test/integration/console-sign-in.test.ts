import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getUserByEmail } from '../../lib/users/user-records.ts';
import { listMembershipsOfUser } from '../../lib/teams/membership-records.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { callFrom, cookiePair, freshIp, latestSignInToken, signInByLink } from '../support/console.ts';
import { makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
const LINK = '/api/v1/auth/sign-in-link';
const SIGN_IN = '/api/v1/auth/sign-in';

beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform?.stop());

let n = 0;
const newAddress = () => `person-${Date.now()}-${n++}@example.test`;
const asConsole = () => ({ origin: platform.consoleUrl });

describe('e-mail sign-in links', () => {
  it('mails a link to any address, and its first use creates the user, a personal team and a session cookie', async () => {
    const email = newAddress();
    const ip = freshIp();
    const sent = await callFrom(platform, ip, 'POST', LINK, { body: { email: email.toUpperCase() } });
    expect(sent.status).toBe(202);
    expect(sent.body.data).toEqual({ status: 'sent' });
    const mail = platform.outbox.mails().find((m) => m.to.includes(email))!;
    expect(mail.subject).toBe('Your Slipway sign-in link');
    expect(mail.text).toContain(`${platform.consoleUrl}/sign-in#token=`);
    expect(mail.text).toContain('expires in 15 minutes');

    const reply = await callFrom(platform, ip, 'POST', SIGN_IN, {
      body: { token: latestSignInToken(platform, email) },
      headers: asConsole(),
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ email, email_verified: true, is_platform_admin: false });
    const user = await getUserByEmail(email);
    expect(user).toMatchObject({ source: 'email_link', email_verified: true });
    const memberships = await listMembershipsOfUser(user!.user_id);
    expect(memberships.map((m) => m.role)).toEqual(['owner']);
    expect(user!.default_team_id).toBe(memberships[0]!.team_id);

    const teams = await callFrom(platform, ip, 'GET', '/api/v1/me/teams', { headers: { cookie: cookiePair(reply.headers['set-cookie']) } });
    expect(teams.status).toBe(200);
    expect(teams.body.data).toEqual([
      expect.objectContaining({ id: memberships[0]!.team_id, role: 'owner', name: `${email.split('@')[0]}'s team` }),
    ]);
  });

  it('sets the session in an HttpOnly, SameSite=Lax cookie (not Secure on localhost), never in the body', async () => {
    const email = newAddress();
    const ip = freshIp();
    await callFrom(platform, ip, 'POST', LINK, { body: { email } });
    const reply = await callFrom(platform, ip, 'POST', SIGN_IN, {
      body: { token: latestSignInToken(platform, email) },
      headers: asConsole(),
    });
    const setCookie = reply.headers['set-cookie'] as string[];
    expect(setCookie).toHaveLength(1);
    expect(setCookie[0]).toMatch(/^slipway_session=slw_s_[A-Za-z0-9_-]{43}; Path=\/; Max-Age=2592000; HttpOnly; SameSite=Lax$/);
    expect(JSON.stringify(reply.body)).not.toContain('slw_s_');
  });

  it('a link works once: of two racing uses exactly one signs in, and a third is refused', async () => {
    const email = newAddress();
    const ip = freshIp();
    await callFrom(platform, ip, 'POST', LINK, { body: { email } });
    const token = latestSignInToken(platform, email);
    const replies = await Promise.all(
      [1, 2, 3].map(() => callFrom(platform, ip, 'POST', SIGN_IN, { body: { token }, headers: asConsole() })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    for (const refused of replies.filter((r) => r.status === 400)) {
      expectError(refused, 400, 'SIGN_IN_LINK_INVALID');
      expect(refused.body.error).toBe('This sign-in link is invalid, expired or already used. Ask for a new one.');
      expect(refused.headers['set-cookie']).toBeUndefined();
    }
    expectError(await callFrom(platform, ip, 'POST', SIGN_IN, { body: { token }, headers: asConsole() }), 400, 'SIGN_IN_LINK_INVALID');
  });

  it('two first sign-ins of one new address racing make one user with one team', async () => {
    const email = newAddress();
    const ip = freshIp();
    await callFrom(platform, ip, 'POST', LINK, { body: { email } });
    const first = latestSignInToken(platform, email);
    await callFrom(platform, ip, 'POST', LINK, { body: { email } });
    const second = latestSignInToken(platform, email);
    expect(second).not.toBe(first);
    const replies = await Promise.all(
      [first, second].map((token) => callFrom(platform, ip, 'POST', SIGN_IN, { body: { token }, headers: asConsole() })),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(replies[0]!.body.data.user_id).toBe(replies[1]!.body.data.user_id);
    expect(await listMembershipsOfUser(replies[0]!.body.data.user_id)).toHaveLength(1);
  });

  it('an existing account signs in to itself and gets no second team', async () => {
    const { user } = await makeUser();
    const { user: me } = await signInByLink(platform, user.email);
    expect(me.user_id).toBe(user.user_id);
    expect(await listMembershipsOfUser(user.user_id)).toHaveLength(1);
  });

  it('malformed and unknown tokens, and bad addresses, are refused with the envelope', async () => {
    const ip = freshIp();
    expectError(
      await callFrom(platform, ip, 'POST', SIGN_IN, { body: { token: 'nope' }, headers: asConsole() }),
      400,
      'SIGN_IN_LINK_INVALID',
    );
    expectError(
      await callFrom(platform, ip, 'POST', SIGN_IN, { body: { token: 'A'.repeat(43) }, headers: asConsole() }),
      400,
      'SIGN_IN_LINK_INVALID',
    );
    const bad = await callFrom(platform, ip, 'POST', LINK, { body: { email: 'not an address' } });
    expectError(bad, 400, 'VALIDATION_FAILED');
    expect(bad.body.details.fields.map((f: { field: string }) => f.field)).toEqual(['email']);
  });

  it('is limited like the confirmation resend: a 4th link to one address in the hour is 429 with Retry-After', async () => {
    const email = newAddress();
    for (let i = 0; i < 3; i++) expect((await callFrom(platform, freshIp(), 'POST', LINK, { body: { email } })).status).toBe(202);
    const limited = await callFrom(platform, freshIp(), 'POST', LINK, { body: { email } });
    expectError(limited, 429, 'SIGN_IN_LINK_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body.details).toMatchObject({ limit: 'address', max_per_hour: 3 });
  });

  it('and 10 per IP address: the 11th from one address is 429', async () => {
    const ip = freshIp();
    for (let i = 0; i < 10; i++) expect((await callFrom(platform, ip, 'POST', LINK, { body: { email: newAddress() } })).status).toBe(202);
    const limited = await callFrom(platform, ip, 'POST', LINK, { body: { email: newAddress() } });
    expectError(limited, 429, 'SIGN_IN_LINK_LIMITED');
    expect(limited.body.details).toMatchObject({ limit: 'ip_address', max_per_hour: 10 });
  });

  it('a sign-in posted from another site is refused (login CSRF) and leaves the link unused', async () => {
    const email = newAddress();
    const ip = freshIp();
    await callFrom(platform, ip, 'POST', LINK, { body: { email } });
    const token = latestSignInToken(platform, email);
    const refused = await callFrom(platform, ip, 'POST', SIGN_IN, { body: { token }, headers: { origin: 'http://evil.localhost:9' } });
    expectError(refused, 403, 'CROSS_SITE_REQUEST_REFUSED');
    expect((await callFrom(platform, ip, 'POST', SIGN_IN, { body: { token }, headers: asConsole() })).status).toBe(200);
  });
});

describe('the session cookie', () => {
  it('authenticates reads from anywhere on the origin and writes only from the console', async () => {
    const { cookie, user } = await signInByLink(platform, newAddress());
    const ip = freshIp();
    const me = await callFrom(platform, ip, 'GET', '/api/v1/me', { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ user_id: user.user_id, email: user.email });

    const body = { name: 'Renamed by the console' };
    const fromConsole = await callFrom(platform, ip, 'PATCH', '/api/v1/team/profile', { body, headers: { cookie, ...asConsole() } });
    expect(fromConsole.status).toBe(200);
    expect(fromConsole.body.data.name).toBe('Renamed by the console');

    // A site on the platform's own domain is the same site as the console: SameSite does not stop it, the origin check does.
    const attempts: Record<string, string>[] = [
      { cookie, origin: 'http://mysite.localhost:3000' },
      { cookie },
      { cookie, origin: platform.consoleUrl, 'sec-fetch-site': 'same-site' },
      { cookie, origin: 'null' },
    ];
    for (const headers of attempts) {
      const refused = await callFrom(platform, ip, 'PATCH', '/api/v1/team/profile', { body: { name: 'Hijacked' }, headers });
      expectError(refused, 403, 'CROSS_SITE_REQUEST_REFUSED');
    }
    const after = await callFrom(platform, ip, 'GET', '/api/v1/team/profile', { headers: { cookie } });
    expect(after.body.data.name).toBe('Renamed by the console');
  });

  it('does not carry an API key, and a bearer token still works from any origin (CLI, API keys)', async () => {
    const { user, token } = await makeUser();
    const ip = freshIp();
    expectError(
      await callFrom(platform, ip, 'GET', '/api/v1/me', { headers: { cookie: `slipway_session=slw_k_${'A'.repeat(43)}` } }),
      401,
      'UNAUTHENTICATED',
    );
    const bearer = await callFrom(platform, ip, 'POST', '/api/v1/notices/seen', {
      body: { seen_at: new Date().toISOString() },
      headers: { authorization: `Bearer ${token}`, origin: 'http://elsewhere.example' },
    });
    expect(bearer.status).toBe(200);
    const me = await callFrom(platform, ip, 'GET', '/api/v1/me', { headers: { authorization: `Bearer ${token}` } });
    expect(me.body.data.user_id).toBe(user.user_id);
  });

  it('sign-out revokes the session and clears the cookie', async () => {
    const { cookie } = await signInByLink(platform, newAddress());
    const ip = freshIp();
    const out = await callFrom(platform, ip, 'POST', '/api/v1/auth/sign-out', { headers: { cookie, ...asConsole() } });
    expect(out.status).toBe(200);
    expect(out.headers['set-cookie']).toEqual(['slipway_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax']);
    expectError(await callFrom(platform, ip, 'GET', '/api/v1/me', { headers: { cookie } }), 401, 'UNAUTHENTICATED');
  });
});

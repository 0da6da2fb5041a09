import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getMembership } from '../../lib/teams/membership-records.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { signInByLink } from '../support/console.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform?.stop());

describe('team members', () => {
  it('lists members with their addresses, the owner first; any member may read', async () => {
    const m = await makeTeamWithRoles();
    const reply = await platform.api('GET', '/api/v1/team/members', { token: m.member.token });
    expect(reply.status).toBe(200);
    expect(reply.body.data.map((r: { user_id: string; role: string }) => [r.user_id, r.role])).toEqual([
      [m.owner.user.user_id, 'owner'],
      [m.admin.user.user_id, 'admin'],
      [m.member.user.user_id, 'member'],
    ]);
    expect(reply.body.data[0]).toMatchObject({ email: m.owner.user.email, name: 'Owner', joined_at: expect.any(String) });
    expectError(
      await platform.api('GET', '/api/v1/team/members', { token: m.outsider.token, headers: { 'x-team-id': m.team.id } }),
      403,
      'FORBIDDEN',
    );
  });

  it('an admin changes roles and removes members, never the owner; a member may not', async () => {
    const m = await makeTeamWithRoles();
    const path = (u: { user: { user_id: string } }) => `/api/v1/team/members/${u.user.user_id}`;
    expectError(await platform.api('PATCH', path(m.admin), { token: m.member.token, body: { role: 'member' } }), 403, 'FORBIDDEN');
    expectError(await platform.api('PATCH', path(m.member), { token: m.apiKey.token, body: { role: 'admin' } }), 403, 'SESSION_REQUIRED');
    const promoted = await platform.api('PATCH', path(m.member), { token: m.admin.token, body: { role: 'admin' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body.data).toEqual({ user_id: m.member.user.user_id, role: 'admin' });
    expect((await getMembership(m.team.id, m.member.user.user_id))?.role).toBe('admin');

    const owner = await platform.api('PATCH', path(m.owner), { token: m.admin.token, body: { role: 'member' } });
    expectError(owner, 409, 'MEMBER_IS_OWNER');
    expect((await getMembership(m.team.id, m.owner.user.user_id))?.role).toBe('owner');
    expectError(await platform.api('DELETE', path(m.owner), { token: m.admin.token }), 409, 'MEMBER_IS_OWNER');
    expectError(await platform.api('PATCH', path(m.outsider), { token: m.admin.token, body: { role: 'admin' } }), 404, 'MEMBER_NOT_FOUND');
    expectError(await platform.api('PATCH', path(m.member), { token: m.admin.token, body: { role: 'owner' } }), 400, 'VALIDATION_FAILED');

    const removed = await platform.api('DELETE', path(m.member), { token: m.admin.token });
    expect(removed.status).toBe(200);
    expect(await getMembership(m.team.id, m.member.user.user_id)).toBeNull();
    expectError(await platform.api('DELETE', path(m.member), { token: m.admin.token }), 404, 'MEMBER_NOT_FOUND');
  });
});

describe('invitations', () => {
  it('an admin invites an address, which is mailed; the invitee signs in by link, sees and accepts it once', async () => {
    const m = await makeTeamWithRoles();
    const email = `invitee-${Date.now()}@example.test`;
    const created = await platform.api('POST', '/api/v1/team/invitations', { token: m.admin.token, body: { email, role: 'member' } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      email,
      role: 'member',
      status: 'pending',
      team_id: m.team.id,
      invited_by: m.admin.user.user_id,
    });
    const mail = platform.outbox.mails().find((x) => x.to.includes(email))!;
    expect(mail.subject).toBe(`Join ${m.team.name} on Slipway`);
    expect(mail.text).toContain(`${platform.consoleUrl}/invitations`);

    expectError(
      await platform.api('POST', '/api/v1/team/invitations', { token: m.admin.token, body: { email, role: 'member' } }),
      409,
      'INVITATION_PENDING',
    );
    expectError(
      await platform.api('POST', '/api/v1/team/invitations', { token: m.admin.token, body: { email: m.member.user.email, role: 'admin' } }),
      409,
      'ALREADY_A_MEMBER',
    );
    expectError(
      await platform.api('POST', '/api/v1/team/invitations', { token: m.member.token, body: { email, role: 'member' } }),
      403,
      'FORBIDDEN',
    );

    const listed = await platform.api('GET', '/api/v1/team/invitations', { token: m.admin.token });
    expect(listed.body.data.map((i: { email: string }) => i.email)).toEqual([email]);

    const { cookie, user } = await signInByLink(platform, email);
    const mine = await platform.api('GET', '/api/v1/me/invitations', { headers: { cookie } });
    expect(mine.body.data).toEqual([expect.objectContaining({ id: created.body.data.id, team_name: m.team.name, status: 'pending' })]);

    const accept = () =>
      platform.api('POST', `/api/v1/me/invitations/${created.body.data.id}/accept`, { headers: { cookie, origin: platform.consoleUrl } });
    const [a, b] = await Promise.all([accept(), accept()]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect((await getMembership(m.team.id, user.user_id))?.role).toBe('member');
    expect((await platform.api('GET', '/api/v1/me/invitations', { headers: { cookie } })).body.data).toEqual([]);
    expectError(
      await platform.api('DELETE', `/api/v1/team/invitations/${created.body.data.id}`, { token: m.admin.token }),
      409,
      'INVITATION_NOT_PENDING',
    );
  });

  it('an invitation to someone else cannot be accepted; a revoked one is gone', async () => {
    const m = await makeTeamWithRoles();
    const created = await platform.api('POST', '/api/v1/team/invitations', {
      token: m.owner.token,
      body: { email: `x-${Date.now()}@example.test`, role: 'admin' },
    });
    const stranger = await makeUser();
    expectError(
      await platform.api('POST', `/api/v1/me/invitations/${created.body.data.id}/accept`, { token: stranger.token }),
      404,
      'INVITATION_NOT_FOUND',
    );
    expect((await platform.api('DELETE', `/api/v1/team/invitations/${created.body.data.id}`, { token: m.admin.token })).status).toBe(200);
    expect((await platform.api('GET', '/api/v1/team/invitations', { token: m.admin.token })).body.data).toEqual([]);
    expectError(
      await platform.api('DELETE', `/api/v1/team/invitations/${created.body.data.id}`, { token: m.admin.token }),
      404,
      'INVITATION_NOT_FOUND',
    );
  });
});

describe('API keys', () => {
  it('are made with the token shown once, listed without it, work as bearer tokens and stop when revoked', async () => {
    const m = await makeTeamWithRoles();
    const created = await platform.api('POST', '/api/v1/team/api-keys', {
      token: m.admin.token,
      body: { name: 'CI deploys', role: 'member' },
    });
    expect(created.status).toBe(201);
    const key = created.body.data;
    expect(key).toMatchObject({ name: 'CI deploys', role: 'member', created_by: m.admin.user.user_id, revoked_at: null });
    expect(key.token).toMatch(/^slw_k_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(key.token.slice(0, 10));

    const listed = await platform.api('GET', '/api/v1/team/api-keys', { token: m.owner.token });
    // The team's first key is the one the test helper made.
    expect(listed.body.data).toHaveLength(2);
    expect(listed.body.data[1]).toEqual({
      id: key.id,
      name: 'CI deploys',
      role: 'member',
      prefix: key.prefix,
      created_at: key.created_at,
      created_by: m.admin.user.user_id,
      revoked_at: null,
    });
    expect(listed.text).not.toContain(key.token);

    expect((await platform.api('GET', '/api/v1/projects', { token: key.token })).status).toBe(200);
    // A key manages no keys, and a member manages none either.
    expectError(await platform.api('GET', '/api/v1/team/api-keys', { token: key.token }), 403, 'SESSION_REQUIRED');
    expectError(await platform.api('POST', '/api/v1/team/api-keys', { token: m.member.token, body: { name: 'x' } }), 403, 'FORBIDDEN');
    expectError(
      await platform.api('DELETE', `/api/v1/team/api-keys/${key.id}`, { token: m.outsider.token, headers: { 'x-team-id': m.team.id } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await platform.api('POST', '/api/v1/team/api-keys', { token: m.admin.token, body: { name: '' } }),
      400,
      'VALIDATION_FAILED',
    );

    const revoked = await platform.api('DELETE', `/api/v1/team/api-keys/${key.id}`, { token: m.admin.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.revoked_at).toEqual(expect.any(String));
    expectError(await platform.api('GET', '/api/v1/projects', { token: key.token }), 401, 'UNAUTHENTICATED');
    // Another team's admin cannot reach it by id.
    const other = await makeTeamWithRoles();
    expectError(await platform.api('DELETE', `/api/v1/team/api-keys/${key.id}`, { token: other.admin.token }), 404, 'API_KEY_NOT_FOUND');
  });
});

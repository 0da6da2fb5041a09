import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeam } from '../../lib/teams/teams.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { expectEnvelopeError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles('Acme Rockets');
});
afterAll(() => platform?.stop());

describe('GET /api/v1/team/profile: authorization matrix', () => {
  it('401 without a token, with a malformed token and with an unknown token', async () => {
    expectEnvelopeError(await platform.api('GET', '/api/v1/team/profile'), 401, 'UNAUTHENTICATED');
    expectEnvelopeError(
      await platform.api('GET', '/api/v1/team/profile', { headers: { authorization: 'Basic Zm9vOmJhcg==' } }),
      401,
      'UNAUTHENTICATED',
    );
    expectEnvelopeError(await platform.api('GET', '/api/v1/team/profile', { token: 'not-a-token' }), 401, 'UNAUTHENTICATED');
    expectEnvelopeError(await platform.api('GET', '/api/v1/team/profile', { token: `slw_s_${'A'.repeat(43)}` }), 401, 'UNAUTHENTICATED');
  });

  it.each(['owner', 'admin', 'member', 'apiKey'] as const)('200 for the %s of the team', async (who) => {
    const reply = await platform.api('GET', '/api/v1/team/profile', { token: m[who].token });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      id: m.team.id,
      name: 'Acme Rockets',
      slug: 'acme-rockets',
      display_label: 'Acme Rockets',
      slug_chosen_at: null,
    });
    expect(reply.body.meta.request_id).toEqual(expect.any(String));
  });

  it('a member of another team gets their own team; naming this team is 403', async () => {
    const own = await platform.api('GET', '/api/v1/team/profile', { token: m.outsider.token });
    expect(own.body.data.id).toBe(m.otherTeam.id);
    expectEnvelopeError(
      await platform.api('GET', '/api/v1/team/profile', { token: m.outsider.token, headers: { 'x-team-id': m.team.id } }),
      403,
      'FORBIDDEN',
    );
  });

  it('a platform admin who is no member is 403 for the team, 400 with no team at all', async () => {
    expectEnvelopeError(
      await platform.api('GET', '/api/v1/team/profile', { token: m.platformAdmin.token, headers: { 'x-team-id': m.team.slug } }),
      403,
      'FORBIDDEN',
    );
    expectEnvelopeError(await platform.api('GET', '/api/v1/team/profile', { token: m.platformAdmin.token }), 400, 'NO_CURRENT_TEAM');
  });

  it('an API key cannot name another team with X-Team-Id', async () => {
    expectEnvelopeError(
      await platform.api('GET', '/api/v1/team/profile', { token: m.apiKey.token, headers: { 'x-team-id': m.otherTeam.id } }),
      403,
      'FORBIDDEN',
    );
  });
});

describe('GET /api/v1/teams/{team}/profile: authorization matrix', () => {
  const paths = () => [`/api/v1/teams/${m.team.id}/profile`, `/api/v1/teams/${m.team.slug}/profile`];

  it('401 without, with a malformed and with an unknown token', async () => {
    for (const path of paths()) {
      expectEnvelopeError(await platform.api('GET', path), 401, 'UNAUTHENTICATED');
      expectEnvelopeError(await platform.api('GET', path, { headers: { authorization: 'Bearer' } }), 401, 'UNAUTHENTICATED');
      expectEnvelopeError(await platform.api('GET', path, { token: `slw_k_${'b'.repeat(43)}` }), 401, 'UNAUTHENTICATED');
    }
  });

  it.each(['owner', 'admin', 'member', 'apiKey'] as const)('200 for the %s, by UUID and by slug', async (who) => {
    for (const path of paths()) {
      const reply = await platform.api('GET', path, { token: m[who].token });
      expect(reply.status).toBe(200);
      expect(reply.body.data.id).toBe(m.team.id);
      expect(reply.headers.get('deprecation')).toBeNull();
    }
  });

  it.each(['outsider', 'platformAdmin'] as const)('403 for the %s (an existing team they are not in)', async (who) => {
    for (const path of paths()) expectEnvelopeError(await platform.api('GET', path, { token: m[who].token }), 403, 'FORBIDDEN');
  });

  it('404 for a team that does not exist, by UUID and by slug', async () => {
    expectEnvelopeError(
      await platform.api('GET', '/api/v1/teams/6f1c2a7e-9b1d-4c1e-8a55-2f0c6a1d9e00/profile', { token: m.owner.token }),
      404,
      'TEAM_NOT_FOUND',
    );
    expectEnvelopeError(await platform.api('GET', '/api/v1/teams/no-such-team/profile', { token: m.owner.token }), 404, 'TEAM_NOT_FOUND');
  });
});

describe('display_label and slug_chosen_at', () => {
  it('display_label is never empty, also for a team named by an identity-provider organization UUID', async () => {
    const owner = await makeUser();
    const team = await createTeam({ name: '0b6f3a52-8a7e-4f5b-9a43-6d0b1c2e3f41', ownerUserId: owner.user.user_id });
    const reply = await platform.api('GET', `/api/v1/teams/${team.id}/profile`, { token: owner.token });
    expect(reply.status).toBe(200);
    expect(reply.body.data.name).toBe('0b6f3a52-8a7e-4f5b-9a43-6d0b1c2e3f41');
    expect(reply.body.data.display_label).toBe(team.slug);
    expect(reply.body.data.display_label).not.toMatch(/^[0-9a-f-]{36}$/);
    expect(reply.body.data.slug_chosen_at).toBeNull();
  });
});

describe('PATCH /api/v1/team/profile: renaming the slug', () => {
  it('member and API key roles: member 403, owner and admin allowed', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', { token: m.member.token, body: { name: 'X' } });
    expectEnvelopeError(reply, 403, 'FORBIDDEN');
  });

  it('validates the body and names every failing field', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', { token: m.owner.token, body: { name: '', slug: 5 } });
    expectEnvelopeError(reply, 400, 'VALIDATION_FAILED');
    const fields = reply.body.details.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['name', 'slug']);
    expectEnvelopeError(
      await platform.api('PATCH', '/api/v1/team/profile', { token: m.owner.token, body: { slug: 'Not Valid!' } }),
      400,
      'TEAM_SLUG_INVALID',
    );
    expectEnvelopeError(
      await platform.api('PATCH', '/api/v1/team/profile', { token: m.owner.token, body: { slug: 'admin' } }),
      400,
      'TEAM_SLUG_RESERVED',
    );
    expectEnvelopeError(
      await platform.api('PATCH', '/api/v1/team/profile', { token: m.owner.token, body: { slug: m.otherTeam.slug } }),
      409,
      'TEAM_SLUG_TAKEN',
    );
    // Nothing changed.
    const after = await platform.api('GET', '/api/v1/team/profile', { token: m.owner.token });
    expect(after.body.data.slug).toBe('acme-rockets');
    expect(after.body.data.slug_chosen_at).toBeNull();
  });

  it('the old slug resolves for 30 days with Deprecation and a canonical Link, and is held from other teams', async () => {
    const renamed = await platform.api('PATCH', '/api/v1/team/profile', { token: m.admin.token, body: { slug: 'acme' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.slug).toBe('acme');
    expect(Date.parse(renamed.body.data.slug_chosen_at)).toBeGreaterThan(Date.now() - 60_000);

    const old = await platform.api('GET', '/api/v1/teams/acme-rockets/profile', { token: m.member.token });
    expect(old.status).toBe(200);
    expect(old.body.data.slug).toBe('acme');
    expect(old.headers.get('deprecation')).toBe('true');
    expect(old.headers.get('link')).toBe(`<${platform.baseUrl}/api/v1/teams/acme/profile>; rel="canonical"`);

    const current = await platform.api('GET', '/api/v1/teams/acme/profile', { token: m.member.token });
    expect(current.headers.get('deprecation')).toBeNull();

    // Another team cannot take the retired slug during its 30 days.
    const other = await platform.api('PATCH', '/api/v1/team/profile', { token: m.outsider.token, body: { slug: 'acme-rockets' } });
    expectEnvelopeError(other, 409, 'TEAM_SLUG_TAKEN');
  });

  it('two teams racing for one slug: exactly one wins', async () => {
    const a = await makeTeamWithRoles();
    const b = await makeTeamWithRoles();
    const replies = await Promise.all([
      platform.api('PATCH', '/api/v1/team/profile', { token: a.owner.token, body: { slug: 'contested' } }),
      platform.api('PATCH', '/api/v1/team/profile', { token: b.owner.token, body: { slug: 'contested' } }),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(replies.find((r) => r.status === 409)!.body.code).toBe('TEAM_SLUG_TAKEN');
  });
});

describe('the envelope on requests no route matches', () => {
  it('404 ROUTE_NOT_FOUND for an unknown path and 405 METHOD_NOT_ALLOWED with Allow for a known one', async () => {
    expectEnvelopeError(await platform.api('GET', '/api/v1/nothing-here'), 404, 'ROUTE_NOT_FOUND');
    const reply = await platform.api('DELETE', '/api/v1/team/profile', { token: m.owner.token });
    expectEnvelopeError(reply, 405, 'METHOD_NOT_ALLOWED');
    expect(reply.headers.get('allow')).toBe('GET, PATCH');
  });
});

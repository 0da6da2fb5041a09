import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyConnectState } from '../../lib/git/connect-state.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles('Git Connectors');
});
afterAll(() => platform?.stop());

const connect = (teamId: string | undefined, token?: string) =>
  platform.api('GET', `/api/v1/auth/git-host/connect${teamId === undefined ? '' : `?team_id=${encodeURIComponent(teamId)}`}`, { token });

describe('GET /api/v1/auth/git-host/connect', () => {
  it.each(['owner', 'admin'] as const)('200 for the %s: install URL with a signed, expiring state and the verifier', async (who) => {
    const before = Date.now();
    const reply = await connect(m.team.id, m[who].token);
    const after = Date.now();
    expect(reply.status).toBe(200);
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const data = reply.body.data;
    expect(Object.keys(data).sort()).toEqual(['expires_at', 'install_url', 'state', 'verifier']);
    const installUrl = new URL(data.install_url);
    expect(`${installUrl.origin}${installUrl.pathname}`).toBe('https://github.com/apps/slipway-local/installations/new');
    expect(installUrl.searchParams.get('state')).toBe(data.state);
    const expiresAt = Date.parse(data.expires_at);
    // Ten minutes from when the platform answered: bounded by the clock before the request and after the reply
    // (a fixed slack after `before` failed on a loaded machine, where the request itself took over a second).
    expect(expiresAt).toBeGreaterThanOrEqual(before + 10 * 60_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + 10 * 60_000 + 1000);

    // What the callback will do: the state verifies with the platform's secret, for this team and person, with this verifier.
    const check = verifyConnectState(data.state, new Date(), { verifier: data.verifier });
    expect(check).toMatchObject({ ok: true, teamId: m.team.id, userId: m[who].user.user_id });
    expect(verifyConnectState(data.state, new Date(expiresAt), { verifier: data.verifier })).toEqual({ ok: false, reason: 'expired' });
    expect(verifyConnectState(data.state, new Date(), { verifier: 'x'.repeat(43) })).toEqual({ ok: false, reason: 'verifier_mismatch' });
  });

  it('401 without a token or with an unknown one', async () => {
    expectError(await connect(m.team.id), 401, 'UNAUTHENTICATED');
    expectError(await connect(m.team.id, `slw_s_${'A'.repeat(43)}`), 401, 'UNAUTHENTICATED');
  });

  it('403 for a member, an outsider and a platform admin who is no member', async () => {
    expectError(await connect(m.team.id, m.member.token), 403, 'FORBIDDEN');
    expectError(await connect(m.team.id, m.outsider.token), 403, 'FORBIDDEN');
    expectError(await connect(m.team.id, m.platformAdmin.token), 403, 'FORBIDDEN');
  });

  it('403 SESSION_REQUIRED for an API key, even with the admin role: the state binds a person', async () => {
    expectError(await connect(m.team.id, m.apiKey.token), 403, 'SESSION_REQUIRED');
  });

  it('the other team owner gets a state for their own team only', async () => {
    const reply = await connect(m.otherTeam.id, m.outsider.token);
    expect(reply.status).toBe(200);
    expect(verifyConnectState(reply.body.data.state, new Date())).toMatchObject({ ok: true, teamId: m.otherTeam.id });
  });

  it('400 TEAM_ID_INVALID for a missing, empty or malformed team_id', async () => {
    for (const teamId of [undefined, '', 'acme', `${m.team.id}x`, m.team.slug]) {
      const reply = await connect(teamId, m.owner.token);
      expectError(reply, 400, 'TEAM_ID_INVALID');
      expect(reply.body.error).toBe('Query parameter team_id is required and must be a team UUID.');
    }
  });

  it('404 TEAM_NOT_FOUND for a well-formed UUID of no team', async () => {
    expectError(await connect('6f1c2a7e-9b1d-4c1e-8a55-2f0c6a1d9e00', m.owner.token), 404, 'TEAM_NOT_FOUND');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeam } from '../../lib/teams/teams.ts';
import { putMembership } from '../../lib/teams/membership-records.ts';
import { createEmailChange, createFeedback, createInvitation, createStepUpGrant, setCredentialCutoff } from '../../lib/privacy/records.ts';
import { runAdmin } from '../../lib/cli/admin.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
const EXPORT = '/api/v1/me/export';

beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform?.stop());

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const SECTIONS = [
  'credential_cutoffs',
  'email_changes',
  'export_version',
  'feedback',
  'generated_at',
  'invitations',
  'profile',
  'readme',
  'step_up_grants',
  'team_memberships',
];
const README_KEYS = ['about', 'deletion', 'included', 'not_included', 'privacy_policy', 'processors', 'questions', 'retained'];

describe('GET /api/v1/me/export: authorization matrix', () => {
  it('401 without a token or with a revoked-looking one', async () => {
    expectError(await platform.api('GET', EXPORT), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('GET', EXPORT, { token: `slw_s_${'D'.repeat(43)}` }), 401, 'UNAUTHENTICATED');
  });

  it('403 SESSION_REQUIRED for an API key: it identifies no person', async () => {
    const m = await makeTeamWithRoles();
    const reply = await platform.api('GET', EXPORT, { token: m.apiKey.token });
    expectError(reply, 403, 'SESSION_REQUIRED');
    expect(reply.body.error).toBe('This action needs a signed-in user; API keys are refused.');
  });

  it('200 for owner, admin, member, a member of another team and a platform admin: each gets their own data only', async () => {
    const m = await makeTeamWithRoles();
    for (const who of ['owner', 'admin', 'member', 'outsider', 'platformAdmin'] as const) {
      const reply = await platform.api('GET', EXPORT, { token: m[who].token, headers: { 'x-team-id': m.team.id } });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('cache-control')).toBe('no-store');
      expect(Object.keys(reply.body.data).sort()).toEqual(SECTIONS);
      expect(reply.body.data.profile.user_id).toBe(m[who].user.user_id);
      expect(reply.body.data.profile.email).toBe(m[who].user.email);
    }
    const admin = await platform.api('GET', EXPORT, { token: m.platformAdmin.token });
    expect(admin.body.data.team_memberships).toEqual([]);
  });
});

describe('GET /api/v1/me/export: contents', () => {
  it('every section of the spec, for the caller across all their teams, and nobody else', async () => {
    const ada = await makeUser({ name: 'Ada Lovelace' });
    const other = await makeUser({ name: 'Charles' });
    const own = await createTeam({ name: 'Analytical Engines', ownerUserId: ada.user.user_id });
    const joined = await createTeam({ name: 'Difference Works', ownerUserId: other.user.user_id });
    await putMembership(joined.id, ada.user.user_id, 'member');
    const third = await createTeam({ name: 'Jacquard Looms', ownerUserId: other.user.user_id });

    const pending = await createInvitation({ teamId: third.id, email: ada.user.email.toUpperCase(), role: 'admin' });
    const accepted = await createInvitation({ teamId: joined.id, email: ada.user.email, role: 'member', acceptedAt: new Date() });
    const expired = await createInvitation({
      teamId: third.id,
      email: ada.user.email,
      role: 'member',
      expiresAt: new Date(Date.now() - 60_000),
    });
    await createInvitation({ teamId: third.id, email: other.user.email, role: 'member' });

    const bug = await createFeedback({
      teamId: own.id,
      userId: ada.user.user_id,
      userEmail: ada.user.email,
      type: 'bug',
      message: 'The deploy button flickers.',
      pageRoute: '/projects/[id]',
      appVersion: '1.4.2',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
      viewport: '1440x900',
    });
    const idea = await createFeedback({
      teamId: joined.id,
      userId: ada.user.user_id,
      userEmail: ada.user.email,
      message: 'Dark mode please.',
    });
    await createFeedback({ teamId: joined.id, userId: other.user.user_id, userEmail: other.user.email, message: 'Not Ada.' });

    const change = await createEmailChange({
      userId: ada.user.user_id,
      oldEmail: ada.user.email,
      newEmail: 'ada@engines.example',
      requestIp: '203.0.113.7',
      requestUserAgent: 'curl/8.5',
    });
    const frozen = await createEmailChange({
      userId: ada.user.user_id,
      oldEmail: ada.user.email,
      newEmail: 'thief@evil.example',
      status: 'frozen',
      attempts: 2,
    });
    await createEmailChange({ userId: other.user.user_id, oldEmail: other.user.email, newEmail: 'c@example.test' });

    const cutoff = await setCredentialCutoff({
      userId: ada.user.user_id,
      reason: 'password_changed',
      notBefore: new Date('2025-01-02T03:04:05.000Z'),
    });
    await setCredentialCutoff({ userId: other.user.user_id, reason: 'sign_out_everywhere' });
    const grant = await createStepUpGrant({ userId: ada.user.user_id, factors: ['password', 'totp'] });

    const reply = await platform.api('GET', EXPORT, { token: ada.token });
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    expect(Object.keys(data).sort()).toEqual(SECTIONS);
    expect(data.export_version).toBe('1');
    expect(data.generated_at).toEqual(ISO);

    expect(data.profile).toEqual({
      email: ada.user.email,
      email_verified: false,
      given_name: null,
      name: 'Ada Lovelace',
      source: 'operator',
      user_id: ada.user.user_id,
    });

    const memberships = [...data.team_memberships].sort((a: any, b: any) => a.team_name.localeCompare(b.team_name));
    expect(memberships).toEqual([
      {
        created_at: ISO,
        display_name: 'Ada Lovelace',
        email: ada.user.email,
        joined_at: ISO,
        role: 'owner',
        team_id: own.id,
        team_name: 'Analytical Engines',
        team_slug: own.slug,
      },
      {
        created_at: ISO,
        display_name: 'Ada Lovelace',
        email: ada.user.email,
        joined_at: ISO,
        role: 'member',
        team_id: joined.id,
        team_name: 'Difference Works',
        team_slug: joined.slug,
      },
    ]);

    const invitations = Object.fromEntries(data.invitations.map((i: any) => [i.status, i]));
    expect(data.invitations).toHaveLength(3);
    expect(invitations.pending).toEqual({
      accepted_at: null,
      created_at: pending.created_at,
      email: ada.user.email,
      expires_at: pending.expires_at,
      role: 'admin',
      status: 'pending',
      team_id: third.id,
      team_name: 'Jacquard Looms',
    });
    expect(invitations.accepted).toMatchObject({
      accepted_at: accepted.accepted_at,
      team_id: joined.id,
      team_name: 'Difference Works',
      status: 'accepted',
    });
    expect(invitations.expired).toMatchObject({ expires_at: expired.expires_at, status: 'expired' });

    expect(data.feedback).toHaveLength(2);
    expect(data.feedback.find((f: any) => f.id === bug.id)).toEqual({
      app_version: '1.4.2',
      created_at: bug.created_at,
      id: bug.id,
      message: 'The deploy button flickers.',
      page_route: '/projects/[id]',
      team_id: own.id,
      team_name: 'Analytical Engines',
      type: 'bug',
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
      user_email: ada.user.email,
      viewport: '1440x900',
    });
    expect(data.feedback.find((f: any) => f.id === idea.id)).toMatchObject({
      team_name: 'Difference Works',
      type: 'general',
      page_route: null,
    });

    expect(data.email_changes).toHaveLength(2);
    expect(data.email_changes.find((c: any) => c.new_email === 'ada@engines.example')).toEqual({
      attempts: 0,
      confirmed_at: null,
      created_at: change.created_at,
      expires_at: change.expires_at,
      freeze_link_expires_at: change.freeze_link_expires_at,
      frozen_at: null,
      new_email: 'ada@engines.example',
      old_email: ada.user.email,
      request_ip: '203.0.113.7',
      request_user_agent: 'curl/8.5',
      status: 'pending',
    });
    expect(data.email_changes.find((c: any) => c.status === 'frozen')).toMatchObject({ attempts: 2, frozen_at: frozen.frozen_at });

    expect(data.credential_cutoffs).toEqual([
      { not_before: '2025-01-02T03:04:05.000Z', reason: 'password_changed', updated_at: cutoff.updated_at },
    ]);
    expect(data.step_up_grants).toEqual([{ created_at: grant.created_at, expires_at: grant.expires_at, factors: ['password', 'totp'] }]);

    expect(Object.keys(data.readme).sort()).toEqual(README_KEYS);
    for (const key of README_KEYS) {
      expect(typeof data.readme[key]).toBe('string');
      expect(data.readme[key].length).toBeGreaterThan(40);
    }
    expect(data.readme.not_included).toContain('projects, deployments');
    expect(data.readme.not_included).toContain('forms');

    // Nothing of the other user leaks in.
    expect(JSON.stringify(data)).not.toContain(other.user.email);
    expect(JSON.stringify(data)).not.toContain('Not Ada.');
  });

  it('an expired pending e-mail change is reported as expired; empty sections are empty arrays', async () => {
    const { user, token } = await makeUser();
    await createEmailChange({
      userId: user.user_id,
      oldEmail: user.email,
      newEmail: 'late@example.test',
      expiresAt: new Date(Date.now() - 1000),
    });
    const reply = await platform.api('GET', EXPORT, { token });
    expect(reply.body.data.email_changes.map((c: any) => [c.new_email, c.status])).toEqual([['late@example.test', 'expired']]);
    const sections = reply.body.data;
    expect(sections.invitations).toEqual([]);
    expect(sections.feedback).toEqual([]);
    expect(sections.credential_cutoffs).toEqual([]);
    expect(sections.step_up_grants).toEqual([]);
  });
});

describe('operator commands create the records the export reads', () => {
  it('admin create-invitation, create-feedback, create-email-change, create-credential-cutoff, create-step-up-grant', async () => {
    const { user, token } = await makeUser({ name: 'Grace' });
    const team = await createTeam({ name: 'Compilers', ownerUserId: user.user_id });
    const invitation = (await runAdmin(['create-invitation', '--team', team.slug, '--email', user.email, '--role', 'admin'])) as any;
    expect(invitation).toMatchObject({ team_id: team.id, email: user.email, role: 'admin', accepted_at: null });
    const feedback = (await runAdmin([
      'create-feedback',
      '--team',
      team.id,
      '--user',
      user.user_id,
      '--message',
      'Great tool',
      '--type',
      'praise',
    ])) as any;
    expect(feedback).toMatchObject({ team_id: team.id, user_id: user.user_id, user_email: user.email, type: 'praise' });
    expect(
      await runAdmin(['create-email-change', '--user', user.user_id, '--new-email', 'grace@navy.example', '--status', 'confirmed']),
    ).toMatchObject({
      status: 'confirmed',
      confirmed_at: ISO,
    });
    expect(await runAdmin(['create-credential-cutoff', '--user', user.user_id, '--reason', 'sign_out_everywhere'])).toMatchObject({
      reason: 'sign_out_everywhere',
      not_before: ISO,
    });
    expect(
      await runAdmin(['create-step-up-grant', '--user', user.user_id, '--factors', 'password,webauthn', '--minutes', '5']),
    ).toMatchObject({
      factors: ['password', 'webauthn'],
    });
    await expect(runAdmin(['create-invitation', '--team', team.id, '--email', user.email, '--role', 'owner'])).rejects.toThrow(
      '--role is admin or member',
    );
    await expect(runAdmin(['create-step-up-grant', '--user', user.user_id, '--factors', 'totp', '--minutes', 'soon'])).rejects.toThrow(
      '--minutes is a positive whole number',
    );

    const data = (await platform.api('GET', EXPORT, { token })).body.data;
    expect(data.invitations).toHaveLength(1);
    expect(data.feedback).toHaveLength(1);
    expect(data.email_changes.map((c: any) => c.status)).toEqual(['confirmed']);
    expect(data.credential_cutoffs.map((c: any) => c.reason)).toEqual(['sign_out_everywhere']);
    expect(data.step_up_grants.map((g: any) => g.factors)).toEqual([['password', 'webauthn']]);
  });
});

import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createApiKey, createSession } from '../../lib/identity/credential-records.ts';
import { hashToken } from '../../lib/identity/tokens.ts';
import { purgeTeam } from '../../lib/lifecycle/team-deletion.ts';
import { createTeam } from '../../lib/teams/teams.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { deploy, uniqueName, uniqueSite } from '../support/uploads.ts';
import { until } from '../support/wait.ts';

/**
 * Team deletion and legal hold (spec: the state table of `pending_deletion`,
 * endpoint 14): the owner's request, the deadline, the purge worker woken by
 * its schedule, the admin's hold that blocks it, the deletions queue that
 * shows a held team past its deadline as overdue, and a hold racing the purge.
 */
let platform: TestPlatform;
let admin: Awaited<ReturnType<typeof makeUser>>;

const teamItem = async (teamId: string) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.team(teamId), ConsistentRead: true }))).Item;
const requestDeletion = (token: string | null) => platform.api('POST', '/api/v1/team/deletion', { token: token ?? undefined });
const cancelDeletion = (token: string | null) => platform.api('DELETE', '/api/v1/team/deletion', { token: token ?? undefined });
const hold = (teamId: string, body: unknown, token: string | null = admin.token) =>
  platform.api('POST', `/api/v1/admin/teams/${teamId}/legal-hold`, { token: token ?? undefined, body });
const deletions = (token: string | null = admin.token) => platform.api('GET', '/api/v1/admin/deletions', { token: token ?? undefined });

/** Moves a pending team's deadline into the past, as the passing of its grace period would. */
async function makeOverdue(teamId: string) {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.team(teamId),
      UpdateExpression: 'SET purge_after = :past',
      ExpressionAttributeValues: { ':past': new Date(Date.now() - 60_000).toISOString() },
    }),
  );
}

beforeAll(async () => {
  platform = await startTestPlatform();
  admin = await makeUser({ platformAdmin: true, name: 'Platform Admin' });
});
afterEach(() => {
  delete process.env.TEAM_PURGE_DELAY_SECONDS;
});
afterAll(() => platform?.stop());

describe('team deletion', () => {
  it('the owner asks for it: pending_deletion with a deadline 30 days on; asking again keeps the first deadline; the owner can take it back', async () => {
    const m = await makeTeamWithRoles();
    const before = Date.now();
    const first = await requestDeletion(m.owner.token);
    expect(first.status).toBe(202);
    expect(first.body.data).toMatchObject({ team_id: m.team.id, status: 'pending_deletion', legal_hold: false });
    const purgeAfter = Date.parse(first.body.data.purge_after);
    expect(purgeAfter).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(purgeAfter).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
    const again = await requestDeletion(m.owner.token);
    expect(again.status).toBe(202);
    expect(again.body.data.purge_after).toBe(first.body.data.purge_after);

    const listed = (await deletions()).body.data.deletions.find((d: { team_id: string }) => d.team_id === m.team.id);
    expect(listed).toEqual({
      team_id: m.team.id,
      team_name: m.team.name,
      deletion_requested_at: first.body.data.deletion_requested_at,
      purge_after: first.body.data.purge_after,
      legal_hold: false,
      overdue: false,
    });

    const cancelled = await cancelDeletion(m.owner.token);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ team_id: m.team.id, status: 'active', purge_after: null });
    expect((await deletions()).body.data.deletions.some((d: { team_id: string }) => d.team_id === m.team.id)).toBe(false);
    expectError(await cancelDeletion(m.owner.token), 409, 'CONFLICT');
  });

  it('only the owner, with a session, may ask or take back; no token 401', async () => {
    const m = await makeTeamWithRoles();
    for (const actor of [m.admin, m.member]) {
      expectError(await requestDeletion(actor.token), 403, 'FORBIDDEN');
      expectError(await cancelDeletion(actor.token), 403, 'FORBIDDEN');
    }
    expect((await requestDeletion(m.apiKey.token)).status).toBe(403);
    expectError(await requestDeletion(null), 401, 'UNAUTHENTICATED');
    expect((await teamItem(m.team.id))!.status).toBeUndefined();
  });

  it('past its deadline a team is purged with its projects; its subdomain is free again', async () => {
    process.env.TEAM_PURGE_DELAY_SECONDS = '1';
    const m = await makeTeamWithRoles();
    const subdomain = `purge-${randomBytes(4).toString('hex')}`;
    const done = await deploy(platform, m.owner.token, uniqueSite(), { name: uniqueName(), subdomain });
    expect((await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/')).status).toBe(200);
    // A forge audience the team holds (docs/builds.md, "Forge tokens"): released with it.
    const audience = `https://forge.example.test/${subdomain}`;
    const claim = (token: string) => platform.api('POST', '/api/v1/team/forge-audiences', { token, body: { audience } });
    expect((await claim(m.owner.token)).status).toBe(201);
    expect((await requestDeletion(m.owner.token)).status).toBe(202);
    // The scheduler driver fires the purge worker at the deadline.
    await until(async () => (await teamItem(m.team.id)) === undefined, 'the purge');
    expect(
      (
        await dynamo().send(
          new GetCommand({ TableName: config.tableName(), Key: keys.project(done.begin.project_id), ConsistentRead: true }),
        )
      ).Item,
    ).toBeUndefined();
    expect(
      (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.membership(m.team.id, m.member.user.user_id) }))).Item,
    ).toBeUndefined();
    expect((await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/')).status).toBe(404);
    const other = await makeTeamWithRoles();
    await deploy(platform, other.owner.token, uniqueSite(), { name: uniqueName(), subdomain });
    expect((await claim(other.owner.token)).status).toBe(201);
  });

  it("a purged team's API keys and the sessions opened for it are refused (401) and deleted; its members' other sessions still work", async () => {
    const m = await makeTeamWithRoles();
    const scoped = await createSession(m.member.user.user_id, m.team.id);
    const secondKey = await createApiKey(m.team.id, 'member');
    const elsewhere = await createTeam({ name: uniqueName('Elsewhere'), ownerUserId: m.member.user.user_id });
    const unscoped = await createSession(m.member.user.user_id, elsewhere.id);
    for (const token of [m.apiKey.token, secondKey, scoped])
      expect((await platform.api('GET', '/api/v1/team/profile', { token })).status).toBe(200);

    expect((await requestDeletion(m.owner.token)).status).toBe(202);
    await makeOverdue(m.team.id);
    expect(await purgeTeam(m.team.id)).toBe('purged');

    for (const token of [m.apiKey.token, secondKey, scoped]) {
      expectError(await platform.api('GET', '/api/v1/team/profile', { token }), 401, 'UNAUTHENTICATED');
      expectError(await platform.api('GET', '/api/v1/projects', { token }), 401, 'UNAUTHENTICATED');
      const item = await dynamo().send(
        new GetCommand({ TableName: config.tableName(), Key: keys.token(hashToken(token)), ConsistentRead: true }),
      );
      expect(item.Item).toBeUndefined();
    }
    const other = await platform.api('GET', '/api/v1/team/profile', { token: unscoped });
    expect(other.status).toBe(200);
    expect(other.body.data.id).toBe(elsewhere.id);
  });

  it('an API key of a purged team that its purge could not find (made before credentials were indexed by team) is refused all the same', async () => {
    const m = await makeTeamWithRoles();
    // As a key written before this change: its item lacks the team's index key.
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.token(hashToken(m.apiKey.token)),
        UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
      }),
    );
    expect((await requestDeletion(m.owner.token)).status).toBe(202);
    await makeOverdue(m.team.id);
    expect(await purgeTeam(m.team.id)).toBe('purged');
    expectError(await platform.api('GET', '/api/v1/team/profile', { token: m.apiKey.token }), 401, 'UNAUTHENTICATED');
  });
});

describe('legal hold (POST /api/v1/admin/teams/{id}/legal-hold)', () => {
  it('a held team past its deadline is never purged and shows as overdue; lifting the hold purges it', async () => {
    process.env.TEAM_PURGE_DELAY_SECONDS = '1';
    const m = await makeTeamWithRoles();
    const held = await hold(m.team.id, { hold: true });
    expect(held.status).toBe(200);
    expect(held.body.data).toMatchObject({ team_id: m.team.id, legal_hold: true, legal_hold_set_by: admin.user.user_id });
    expect((await requestDeletion(m.owner.token)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await purgeTeam(m.team.id)).toBe('held');
    expect((await teamItem(m.team.id))!.status).toBe('pending_deletion');
    const listed = (await deletions()).body.data.deletions.find((d: { team_id: string }) => d.team_id === m.team.id);
    expect(listed).toMatchObject({ legal_hold: true, overdue: true });

    const lifted = await hold(m.team.id, { hold: false });
    expect(lifted.status).toBe(200);
    expect(lifted.body.data.legal_hold).toBe(false);
    await until(async () => (await teamItem(m.team.id)) === undefined, 'the purge after the hold was lifted');
  });

  it('a hold racing the purge: either the hold lands and nothing is purged, or the purge claimed first and the hold is refused', async () => {
    for (let round = 0; round < 4; round++) {
      const m = await makeTeamWithRoles();
      expect((await requestDeletion(m.owner.token)).status).toBe(202);
      await makeOverdue(m.team.id);
      const [outcome, reply] = await Promise.all([purgeTeam(m.team.id), hold(m.team.id, { hold: true })]);
      if (reply.status === 200) {
        expect(outcome).toBe('held');
        expect((await teamItem(m.team.id))!.status).toBe('pending_deletion');
      } else {
        expect(outcome).toBe('purged');
        expect([404, 409]).toContain(reply.status);
        expect(await teamItem(m.team.id)).toBeUndefined();
      }
    }
  });

  it('400 for a body without a boolean hold or a path id that is not a UUID; 404 for an unknown team; 403 for everyone but platform administrators', async () => {
    const m = await makeTeamWithRoles();
    for (const body of [{}, { hold: 'yes' }, { hold: true, extra: 1 }]) expectError(await hold(m.team.id, body), 400, 'VALIDATION_FAILED');
    expectError(await hold('00000000-0000-4000-8000-000000000000', { hold: true }), 404, 'TEAM_NOT_FOUND');
    // The spec's path id is a team UUID: a slug or anything else is a bad request, not an unknown team.
    for (const id of ['not-a-team', m.team.slug, `${m.team.id}x`]) {
      const reply = await hold(id, { hold: true });
      expectError(reply, 400, 'ADMIN_TEAM_ID_INVALID');
      expect(reply.body.details).toEqual({ param: 'id' });
    }
    for (const actor of [m.owner, m.admin, m.member, m.apiKey]) {
      expectError(await hold(m.team.id, { hold: true }, actor.token), 403, 'PLATFORM_ADMIN_REQUIRED');
      expectError(await deletions(actor.token), 403, 'PLATFORM_ADMIN_REQUIRED');
    }
    expectError(await hold(m.team.id, { hold: true }, null), 401, 'UNAUTHENTICATED');
    expectError(await deletions(null), 401, 'UNAUTHENTICATED');
    expect((await teamItem(m.team.id))!.legal_hold).toBeUndefined();
  });
});

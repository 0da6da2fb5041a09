import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEEDBACK_MESSAGE_MAX_CHARS, FEEDBACK_PER_USER_PER_HOUR } from '../../lib/attention/feedback.ts';
import { recordSuccessfulDeploy } from '../../lib/attention/team-state.ts';
import { recordFailedWebhookEvent } from '../../lib/attention/webhooks.ts';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createSession } from '../../lib/identity/credential-records.ts';
import { expireProvisionalProject } from '../../lib/lifecycle/project-expiry.ts';
import { purgeTeam } from '../../lib/lifecycle/team-deletion.ts';
import { createTeam } from '../../lib/teams/teams.ts';
import { runCli } from '../support/cli.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, putMissing, site, uniqueName, uniqueSite } from '../support/uploads.ts';

/**
 * Spec endpoint 19 and "Admin attention queues (data)", with the writers
 * behind each queue: team creation, begins, failed builds and publishes
 * (stuck activation), the subscription command (billing), the feedback
 * endpoint and the handled action (inbox), and the failed-webhook recorder.
 */

const DAY = 86_400_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let platform: TestPlatform;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let admin: string;

const attention = async (token: string | null = admin) => platform.api('GET', '/api/v1/admin/attention', { token: token ?? undefined });
const setSubscription = (teamId: string, body: unknown, token: string | null = admin) =>
  platform.api('PUT', `/api/v1/admin/teams/${teamId}/subscription`, { token: token ?? undefined, body });
const sendFeedback = (token: string | null, body: unknown, headers: Record<string, string> = {}) =>
  platform.api('POST', '/api/v1/feedback', { token: token ?? undefined, body, headers });
const markHandled = (id: string, token: string | null = admin) =>
  platform.api('POST', `/api/v1/admin/feedback/${id}/handled`, { token: token ?? undefined });

/** A team made `hours` ago, as far as its activation clock goes (the stuck queue waits 24 hours). */
async function backdateTeam(teamId: string, hours: number) {
  const at = new Date(Date.now() - hours * 3_600_000).toISOString();
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.teamAttention(teamId),
      UpdateExpression: 'SET team_created_at = :at, gsi1sk = :sort',
      ConditionExpression: 'attribute_exists(gsi1pk)',
      ExpressionAttributeValues: { ':at': at, ':sort': keys.stuckActivation(at, teamId).gsi1sk },
    }),
  );
  return at;
}

async function teamWithOwner(name = uniqueName('Attention')) {
  const owner = await makeUser({ name: `Owner of ${name}` });
  const team = await createTeam({ name, ownerUserId: owner.user.user_id });
  return { team, owner: { ...owner, token: await createSession(owner.user.user_id) } };
}

beforeAll(async () => {
  platform = await startTestPlatform();
  roles = await makeTeamWithRoles();
  admin = roles.platformAdmin.token;
  // No timeout of its own: the project's hookTimeout (scaled; 180 s in the synthesized mode, whose first hook waits for
  // the run's synthesis) applies.
});
afterAll(async () => {
  await platform?.stop();
});

/*
 * Each test works on teams of its own, so most suites run their tests concurrently. Three stay sequential: the
 * backfill gives every team without an attention item one (it would bring back a purged team's), the feedback
 * suite counts the whole inbox, and the purge must not meet a backfill.
 */
describe.concurrent('authorization', () => {
  it('every admin endpoint: 403 PLATFORM_ADMIN_REQUIRED for owner, admin, member, API key and outsider; 401 without a credential', async () => {
    const feedbackId = randomUUID();
    const calls = [
      (token: string | null) => attention(token),
      (token: string | null) => setSubscription(roles.team.id, { plan: 'pro', status: 'active' }, token),
      (token: string | null) => markHandled(feedbackId, token),
    ];
    for (const call of calls) {
      for (const actor of [roles.owner, roles.admin, roles.member, roles.apiKey, roles.outsider]) {
        expectError(await call(actor.token), 403, 'PLATFORM_ADMIN_REQUIRED');
      }
      expectError(await call(null), 401, 'UNAUTHENTICATED');
      expectError(await call('slw_s_not-a-real-token'), 401, 'UNAUTHENTICATED');
    }
    // Nothing was set by the refused calls.
    const queues = (await attention()).body.data;
    expect(JSON.stringify(queues.billing_attention)).not.toContain(roles.team.id);
  });

  it('feedback: any member with a session; an API key 403 SESSION_REQUIRED; 401 without a credential', async () => {
    for (const actor of [roles.owner, roles.admin, roles.member]) {
      expect((await sendFeedback(actor.token, { message: 'Works for me.' })).status).toBe(201);
    }
    expectError(await sendFeedback(roles.apiKey.token, { message: 'From a key' }), 403, 'SESSION_REQUIRED');
    expectError(await sendFeedback(null, { message: 'Nobody' }), 401, 'UNAUTHENTICATED');
  });
});

describe.concurrent('GET /api/v1/admin/attention: shape', () => {
  it('has the four queues of the spec, and nothing else', async () => {
    const reply = await attention();
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    expect(Object.keys(data).sort()).toEqual(['billing_attention', 'failed_webhook_events', 'feedback_inbox', 'stuck_activation']);
    expect(Object.keys(data.billing_attention).sort()).toEqual(['cancelling', 'past_due', 'paying_idle', 'pending_payment']);
    expect(Object.keys(data.stuck_activation).sort()).toEqual(['no_projects', 'no_successful_deploy']);
    expect(reply.body.meta).toEqual({ request_id: expect.any(String), timestamp: expect.any(String), trace_id: expect.any(String) });
  });
});

describe.concurrent('stuck activation', () => {
  it('no projects, and projects but no successful deploy, with attempts and the latest failure; a publish takes the team out', async () => {
    const idle = await teamWithOwner();
    const trying = await teamWithOwner();
    const fresh = await teamWithOwner();
    const idleCreated = await backdateTeam(idle.team.id, 30);
    const tryingCreated = await backdateTeam(trying.team.id, 48);

    // Attempt 1: a begin that opens a session (a project now exists), never finalized.
    const s = uniqueSite();
    const begin = await platform.api('POST', '/api/v1/uploads', {
      token: trying.owner.token,
      body: { files: s.files, project: { name: uniqueName() } },
    });
    expect(begin.status).toBe(201);
    // Attempt 2: refused, a PHP site: its code is the latest failure reason.
    const php = site({ 'index.php': '<?php echo 1;' });
    const refused = await platform.api('POST', '/api/v1/uploads', {
      token: trying.owner.token,
      body: { files: php.files, project: { name: uniqueName() } },
    });
    expectError(refused, 422, 'UPLOAD_PHP_SITE');

    const data = (await attention()).body.data;
    const stuckIds = (list: any[]) => list.map((r) => r.id);
    expect(data.stuck_activation.no_projects.find((r: any) => r.id === idle.team.id)).toEqual({
      created_at: idleCreated,
      deploy_attempts: 0,
      id: idle.team.id,
      last_activity_at: idle.team.created_at,
      latest_failure_reason: null,
      name: idle.team.name,
      owner_email: idle.owner.user.email,
      owner_name: idle.owner.user.name,
      project_count: 0,
    });
    const row = data.stuck_activation.no_successful_deploy.find((r: any) => r.id === trying.team.id);
    expect(row).toEqual({
      created_at: tryingCreated,
      deploy_attempts: 2,
      id: trying.team.id,
      last_activity_at: expect.any(String),
      latest_failure_reason: 'UPLOAD_PHP_SITE',
      name: trying.team.name,
      owner_email: trying.owner.user.email,
      owner_name: trying.owner.user.name,
      project_count: 1,
    });
    expect(Date.parse(row.last_activity_at)).toBeGreaterThan(Date.parse(trying.team.created_at));
    expect(stuckIds(data.stuck_activation.no_projects)).not.toContain(trying.team.id);
    // A team younger than 24 hours is not stuck yet.
    expect([...stuckIds(data.stuck_activation.no_projects), ...stuckIds(data.stuck_activation.no_successful_deploy)]).not.toContain(
      fresh.team.id,
    );

    // It finishes: the first publish takes it out of the queue.
    await putMissing(platform, trying.owner.token, begin.body.data.upload_id, begin.body.data.missing, s);
    expect(
      (await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token: trying.owner.token })).status,
    ).toBe(200);
    const after = (await attention()).body.data;
    expect([...stuckIds(after.stuck_activation.no_projects), ...stuckIds(after.stuck_activation.no_successful_deploy)]).not.toContain(
      trying.team.id,
    );
    expect(stuckIds(after.stuck_activation.no_projects)).toContain(idle.team.id);
    const state = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamAttention(trying.team.id) }))).Item!;
    expect(state.activated_at).toEqual(expect.any(String));
    expect(state.deploy_attempts).toBe(2);
  }, 60_000);

  it('an upload abandoned until its provisional project expired is the latest failure reason; the team is back to no projects', async () => {
    const t = await teamWithOwner();
    await backdateTeam(t.team.id, 26);
    const begin = await platform.api('POST', '/api/v1/uploads', {
      token: t.owner.token,
      body: { files: uniqueSite().files, project: { name: uniqueName() } },
    });
    expect(begin.status).toBe(201);
    const due = new Date(Date.parse(begin.body.data.project.provisional_until) + 1000);
    expect(await expireProvisionalProject(begin.body.data.project_id, due)).toBe('deleted');
    const data = (await attention()).body.data;
    expect(data.stuck_activation.no_projects.find((r: any) => r.id === t.team.id)).toMatchObject({
      deploy_attempts: 1,
      latest_failure_reason: 'PROJECT_EXPIRED',
      project_count: 0,
      last_activity_at: due.toISOString(),
    });
  }, 60_000);

  it('a failed functions build is the latest failure reason', async () => {
    const t = await teamWithOwner();
    await backdateTeam(t.team.id, 25);
    const broken = site({
      'index.html': '<h1>x</h1>',
      'functions/broken.ts': "import missing from './nowhere.js';\nexport default missing;\n",
    });
    const begin = await platform.api('POST', '/api/v1/uploads', {
      token: t.owner.token,
      body: { files: broken.files, project: { name: uniqueName() } },
    });
    expect(begin.status).toBe(201);
    await putMissing(platform, t.owner.token, begin.body.data.upload_id, begin.body.data.missing, broken);
    expectError(
      await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token: t.owner.token }),
      422,
      'FUNCTIONS_BUILD_FAILED',
    );
    const row = (await attention()).body.data.stuck_activation.no_successful_deploy.find((r: any) => r.id === t.team.id);
    expect(row).toMatchObject({ deploy_attempts: 1, latest_failure_reason: 'FUNCTIONS_BUILD_FAILED', project_count: 1 });
  }, 60_000);
});

describe('teams from before the attention item: admin backfill-attention', () => {
  it('gives each team without an item one: activated when something is live, else into the stuck queue; an existing item is left alone', async () => {
    const never = await teamWithOwner();
    const published = await teamWithOwner();
    const current = await teamWithOwner();
    await deploy(platform, published.owner.token, uniqueSite(), { name: uniqueName() });
    await setSubscription(current.team.id, { plan: 'pro', status: 'past_due' });
    // As teams created before the item existed: none.
    for (const t of [never, published]) {
      await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.teamAttention(t.team.id) }));
    }
    const get = async (teamId: string) =>
      (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamAttention(teamId), ConsistentRead: true }))).Item;
    const before = await get(current.team.id);

    const env = { ...platform.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' };
    const run = await runCli(['admin', 'backfill-attention'], env);
    expect(run.code).toBe(0);
    const counts = JSON.parse(run.stdout);
    expect(counts.created).toBeGreaterThanOrEqual(1);
    expect(counts.activated).toBeGreaterThanOrEqual(1);
    expect(counts.teams).toBe(counts.created + counts.activated + counts.existing);

    expect(await get(current.team.id)).toEqual(before);
    const activated = (await get(published.team.id))!;
    expect(activated.gsi1pk).toBeUndefined();
    expect(activated.last_successful_deploy_at).toEqual(expect.any(String));
    expect((await get(never.team.id))!).toMatchObject({
      gsi1pk: 'STUCKACTIVATION',
      team_created_at: never.team.created_at,
      deploy_attempts: 0,
    });
    await backdateTeam(never.team.id, 25);
    const data = (await attention()).body.data;
    expect(data.stuck_activation.no_projects.map((r: any) => r.id)).toContain(never.team.id);
    expect([...data.stuck_activation.no_projects, ...data.stuck_activation.no_successful_deploy].map((r: any) => r.id)).not.toContain(
      published.team.id,
    );
    // A second run finds every item in place.
    const again = JSON.parse((await runCli(['admin', 'backfill-attention'], env)).stdout);
    expect(again).toMatchObject({ created: 0, activated: 0, existing: again.teams });
  }, 90_000);
});

// The two races run after the other cases and alone in this suite: eight writers on one item are what they test, not
// the machine's other writers.
describe.concurrent('billing attention and PUT /api/v1/admin/teams/{id}/subscription', () => {
  const billingRow = (data: any, list: string, teamId: string) => data.billing_attention[list].find((r: any) => r.team_id === teamId);
  const listsHolding = (data: any, teamId: string) =>
    Object.entries(data.billing_attention)
      .filter(([, rows]) => (rows as any[]).some((r) => r.team_id === teamId))
      .map(([name]) => name);

  it('each status lands in its one queue, with every field of the row', async () => {
    const cancelling = await teamWithOwner();
    const pastDue = await teamWithOwner();
    const pending = await teamWithOwner();
    const trialing = await teamWithOwner();
    const tenDaysAgo = new Date(Date.now() - 10 * DAY - 60_000).toISOString();

    const set = await setSubscription(cancelling.team.id, {
      plan: 'pro',
      status: 'active',
      cancel_at_period_end: true,
      created_at: tenDaysAgo,
    });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({
      team_id: cancelling.team.id,
      plan: 'pro',
      status: 'active',
      cancel_at_period_end: true,
      created_at: tenDaysAgo,
      updated_at: expect.any(String),
      subscription_count: 1,
      last_successful_deploy_at: null,
    });
    expect((await setSubscription(pastDue.team.id, { plan: 'team', status: 'past_due' })).status).toBe(200);
    expect((await setSubscription(pending.team.id, { plan: 'pro', status: 'incomplete' })).status).toBe(200);
    expect((await setSubscription(trialing.team.id, { plan: 'pro', status: 'trialing' })).status).toBe(200);

    const data = (await attention()).body.data;
    expect(billingRow(data, 'cancelling', cancelling.team.id)).toEqual({
      age_days: 10,
      cancel_at_period_end: true,
      created_at: tenDaysAgo,
      last_successful_deploy_at: null,
      owner_email: cancelling.owner.user.email,
      plan: 'pro',
      status: 'active',
      subscription_count: 1,
      team_id: cancelling.team.id,
      team_name: cancelling.team.name,
    });
    expect(listsHolding(data, cancelling.team.id)).toEqual(['cancelling']);
    expect(billingRow(data, 'past_due', pastDue.team.id)).toMatchObject({
      age_days: 0,
      status: 'past_due',
      plan: 'team',
      cancel_at_period_end: false,
    });
    expect(listsHolding(data, pastDue.team.id)).toEqual(['past_due']);
    expect(billingRow(data, 'pending_payment', pending.team.id)).toMatchObject({ status: 'incomplete', plan: 'pro' });
    expect(listsHolding(data, pending.team.id)).toEqual(['pending_payment']);
    // A trial without a cancellation needs nobody's look.
    expect(listsHolding(data, trialing.team.id)).toEqual([]);

    // Paid up again: out of past_due.
    expect((await setSubscription(pastDue.team.id, { plan: 'team', status: 'active' })).status).toBe(200);
    await recordSuccessfulDeploy(pastDue.team.id);
    expect(listsHolding((await attention()).body.data, pastDue.team.id)).toEqual([]);
  });

  it('the operator command `admin set-subscription` sets the same record', async () => {
    const t = await teamWithOwner();
    const env = { ...platform.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' };
    // A refused run writes nothing, so the two start together (each is a process of its own).
    const [run, bad] = await Promise.all([
      runCli(['admin', 'set-subscription', '--team', t.team.slug, '--plan', 'team', '--status', 'past_due', '--cancel-at-period-end'], env),
      runCli(['admin', 'set-subscription', '--team', t.team.id, '--plan', 'pro', '--status', 'frozen'], env),
    ]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      team_id: t.team.id,
      plan: 'team',
      status: 'past_due',
      cancel_at_period_end: true,
      subscription_count: 1,
    });
    expect(billingRow((await attention()).body.data, 'past_due', t.team.id)).toMatchObject({ plan: 'team', cancel_at_period_end: true });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--status is one of');
  }, 60_000);

  it('paying_idle: a paying team with no successful deploy in 30 days; a publish takes it out', async () => {
    const t = await teamWithOwner();
    const free = await teamWithOwner();
    expect((await setSubscription(t.team.id, { plan: 'pro', status: 'active' })).status).toBe(200);
    expect((await setSubscription(free.team.id, { plan: 'free', status: 'active' })).status).toBe(200);
    let data = (await attention()).body.data;
    expect(billingRow(data, 'paying_idle', t.team.id)).toMatchObject({ last_successful_deploy_at: null, status: 'active', plan: 'pro' });
    expect(listsHolding(data, free.team.id)).toEqual([]);

    const longAgo = new Date(Date.now() - 31 * DAY);
    await recordSuccessfulDeploy(t.team.id, longAgo);
    data = (await attention()).body.data;
    expect(billingRow(data, 'paying_idle', t.team.id)).toMatchObject({ last_successful_deploy_at: longAgo.toISOString() });

    await deploy(platform, t.owner.token, uniqueSite(), { name: uniqueName() });
    data = (await attention()).body.data;
    expect(listsHolding(data, t.team.id)).toEqual([]);
    const state = (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamAttention(t.team.id) }))).Item!;
    expect(Date.now() - Date.parse(state.last_successful_deploy_at)).toBeLessThan(60_000);
  }, 60_000);

  it('a new subscription after a cancelled one counts; 400 for bad bodies, 404 for an unknown team, each changing nothing', async () => {
    const t = await teamWithOwner();
    expect((await setSubscription(t.team.id, { plan: 'pro', status: 'active' })).body.data.subscription_count).toBe(1);
    expect((await setSubscription(t.team.id, { plan: 'pro', status: 'past_due' })).body.data.subscription_count).toBe(1);
    expect((await setSubscription(t.team.id, { plan: 'pro', status: 'canceled' })).body.data.subscription_count).toBe(1);
    const again = await setSubscription(t.team.id, { plan: 'team', status: 'incomplete' });
    expect(again.body.data).toMatchObject({ subscription_count: 2, status: 'incomplete', plan: 'team' });

    for (const body of [
      {},
      { plan: 'gold', status: 'active' },
      { plan: 'pro', status: 'frozen' },
      { plan: 'pro', status: 'active', cancel_at_period_end: 'yes' },
      { plan: 'pro', status: 'active', created_at: 'yesterday' },
      { plan: 'pro', status: 'active', created_at: new Date(Date.now() + 2 * DAY).toISOString() },
      { plan: 'pro', status: 'active', extra: 1 },
    ]) {
      expectError(await setSubscription(t.team.id, body), 400, 'VALIDATION_FAILED');
    }
    expectError(
      await platform.api('PUT', `/api/v1/admin/teams/${t.team.id}/subscription`, {
        token: admin,
        rawBody: '{"plan":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'INVALID_JSON',
    );
    expectError(await setSubscription(randomUUID(), { plan: 'pro', status: 'active' }), 404, 'TEAM_NOT_FOUND');
    expectError(await setSubscription('not-a-team', { plan: 'pro', status: 'active' }), 400, 'ADMIN_TEAM_ID_INVALID');
    const data = (await attention()).body.data;
    expect(billingRow(data, 'pending_payment', t.team.id)).toMatchObject({ subscription_count: 2, plan: 'team' });
    expect(listsHolding(data, t.team.id)).toEqual(['pending_payment']);
  });

  it.sequential('race: concurrent restarts of a cancelled subscription count one new subscription; racing statuses and a publish leave the team in the bucket of its final state', async () => {
    const t = await teamWithOwner();
    await setSubscription(t.team.id, { plan: 'pro', status: 'canceled' });
    const restarts = await Promise.all(Array.from({ length: 8 }, () => setSubscription(t.team.id, { plan: 'pro', status: 'active' })));
    expect(restarts.map((r) => r.status)).toEqual(Array(8).fill(200));
    let state = (
      await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamAttention(t.team.id), ConsistentRead: true }))
    ).Item!;
    expect(state.subscription_count).toBe(2);

    const statuses = ['past_due', 'incomplete', 'active', 'trialing', 'past_due', 'active'] as const;
    const writes = await Promise.all([
      ...statuses.map((status, i) => setSubscription(t.team.id, { plan: 'pro', status, cancel_at_period_end: i === 3 })),
      recordSuccessfulDeploy(t.team.id, new Date(Date.now() - 40 * DAY)),
    ]);
    expect(writes.slice(0, statuses.length).map((r: any) => r.status)).toEqual(Array(statuses.length).fill(200));
    state = (
      await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamAttention(t.team.id), ConsistentRead: true }))
    ).Item!;
    const expected = (
      { incomplete: ['pending_payment'], past_due: ['past_due'], active: ['paying_idle'], trialing: ['cancelling'] } as Record<
        string,
        string[]
      >
    )[state.sub_status];
    expect(listsHolding((await attention()).body.data, t.team.id)).toEqual(expected);
    expect(state.subscription_count).toBe(2);
  }, 60_000);

  it.sequential('race: subscription writes racing publishes never leave the paying index sorted by a stale last deploy', async () => {
    const t = await teamWithOwner();
    await setSubscription(t.team.id, { plan: 'pro', status: 'active' });
    for (let round = 0; round < 25; round++) {
      // One publish landing somewhere inside the requests' read-then-write, a newer one each round.
      await Promise.all([
        ...Array.from({ length: 3 }, () => setSubscription(t.team.id, { plan: 'pro', status: 'active' })),
        sleep(Math.random() * 250).then(() => recordSuccessfulDeploy(t.team.id, new Date(Date.now() - (200 - round) * DAY))),
      ]);
      const state = (
        await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamAttention(t.team.id), ConsistentRead: true }))
      ).Item!;
      expect(state.gsi2pk).toBe('BILLING#PAYING');
      expect(state.gsi2sk).toBe(`${state.last_successful_deploy_at}#${t.team.id}`);
    }
  }, 60_000);
});

describe.concurrent('failed webhook events', () => {
  it('one row per provider event, newest first; a redelivery that fails again updates its error and keeps its first time', async () => {
    const eventId = `delivery-${randomUUID()}`;
    const first = await recordFailedWebhookEvent({
      provider: 'github',
      providerEventId: eventId,
      eventType: 'push',
      errorMessage: 'No project links this repository.',
    });
    const again = await recordFailedWebhookEvent(
      { provider: 'github', providerEventId: eventId, eventType: 'push', errorMessage: 'Signature mismatch.' },
      new Date(Date.now() + 1000),
    );
    expect(again.id).toBe(first.id);
    const later = await recordFailedWebhookEvent(
      { provider: 'gitlab', providerEventId: `mr-${randomUUID()}`, eventType: 'merge_request', errorMessage: 'Timed out.' },
      new Date(Date.now() + 2000),
    );
    const rows = (await attention()).body.data.failed_webhook_events;
    expect(rows.filter((r: any) => r.provider_event_id === eventId)).toEqual([
      { created_at: first.created_at, error_message: 'Signature mismatch.', event_type: 'push', id: first.id, provider_event_id: eventId },
    ]);
    const ids = rows.map((r: any) => r.id);
    expect(ids.indexOf(later.id)).toBeLessThan(ids.indexOf(first.id));
  });
});

describe('feedback: POST /api/v1/feedback and the inbox', () => {
  it('records the feedback for the inbox with every field; a long message is cut and marked truncated', async () => {
    const m = await makeTeamWithRoles();
    const sent = await sendFeedback(
      m.member.token,
      {
        message: 'The deploy button is hidden on mobile.',
        type: 'bug',
        page_route: '/projects/abc',
        viewport: '390x844',
        app_version: '1.2.3',
      },
      { 'user-agent': 'Test/1.0' },
    );
    expect(sent.status).toBe(201);
    expect(sent.body.data).toEqual({
      id: expect.any(String),
      created_at: expect.any(String),
      type: 'bug',
      message: 'The deploy button is hidden on mobile.',
      page_route: '/projects/abc',
      truncated: false,
    });
    const long = `${'é'.repeat(FEEDBACK_MESSAGE_MAX_CHARS - 1)}😀😀 and more`;
    const cut = await sendFeedback(m.member.token, { message: long });
    expect(cut.status).toBe(201);
    expect(cut.body.data).toMatchObject({ truncated: true, type: 'general', page_route: null });
    expect(Array.from(cut.body.data.message as string)).toHaveLength(FEEDBACK_MESSAGE_MAX_CHARS);
    expect(cut.body.data.message).toBe(`${'é'.repeat(FEEDBACK_MESSAGE_MAX_CHARS - 1)}😀`);

    const inbox = (await attention()).body.data.feedback_inbox;
    expect(inbox.find((r: any) => r.id === sent.body.data.id)).toEqual({
      created_at: sent.body.data.created_at,
      id: sent.body.data.id,
      message: 'The deploy button is hidden on mobile.',
      page_route: '/projects/abc',
      truncated: false,
      type: 'bug',
      user_email: m.member.user.email,
    });
    expect(inbox.find((r: any) => r.id === cut.body.data.id)).toMatchObject({ truncated: true, user_email: m.member.user.email });
    // Oldest first.
    const ids = inbox.map((r: any) => r.id);
    expect(ids.indexOf(sent.body.data.id)).toBeLessThan(ids.indexOf(cut.body.data.id));

    // The personal data export still carries it.
    const exported = await platform.api('GET', '/api/v1/me/export', { token: m.member.token });
    expect(exported.body.data.feedback.map((f: any) => f.id).sort()).toEqual([sent.body.data.id, cut.body.data.id].sort());
  });

  it('400 for bad input, recording nothing', async () => {
    const m = await makeTeamWithRoles();
    const before = (await attention()).body.data.feedback_inbox.length;
    for (const body of [
      {},
      { message: '   ' },
      { message: 42 },
      { message: 'hi', type: 'rant' },
      { message: 'hi', page_route: 'projects' },
      { message: 'hi', viewport: 'big' },
      { message: 'hi', unknown: true },
    ]) {
      expectError(await sendFeedback(m.member.token, body), 400, 'VALIDATION_FAILED');
    }
    expectError(
      await platform.api('POST', '/api/v1/feedback', {
        token: m.member.token,
        rawBody: 'message=hi',
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect((await attention()).body.data.feedback_inbox.length).toBe(before);
    const exported = await platform.api('GET', '/api/v1/me/export', { token: m.member.token });
    expect(exported.body.data.feedback).toEqual([]);
  });

  it(`race: ${FEEDBACK_PER_USER_PER_HOUR + 6} concurrent posts of one user record exactly ${FEEDBACK_PER_USER_PER_HOUR}; the rest 429 with Retry-After`, async () => {
    const m = await makeTeamWithRoles();
    const replies = await Promise.all(
      Array.from({ length: FEEDBACK_PER_USER_PER_HOUR + 6 }, (_, i) => sendFeedback(m.admin.token, { message: `Idea ${i}`, type: 'idea' })),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(FEEDBACK_PER_USER_PER_HOUR);
    const refused = replies.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(6);
    for (const r of refused) {
      expectError(r, 429, 'FEEDBACK_RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    }
    const exported = await platform.api('GET', '/api/v1/me/export', { token: m.admin.token });
    expect(exported.body.data.feedback).toHaveLength(FEEDBACK_PER_USER_PER_HOUR);
    // Another user of the same team has an allowance of their own.
    expect((await sendFeedback(m.member.token, { message: 'Me too' })).status).toBe(201);
  });

  it('handled feedback leaves the inbox; the first mark stands; unknown ids 404', async () => {
    const m = await makeTeamWithRoles();
    const sent = (await sendFeedback(m.owner.token, { message: 'Please add dark mode.', type: 'idea' })).body.data;
    const marks = await Promise.all([markHandled(sent.id), markHandled(sent.id, (await makeUser({ platformAdmin: true })).token)]);
    expect(marks.map((r) => r.status)).toEqual([200, 200]);
    expect(marks[0]!.body.data).toEqual({ id: sent.id, handled_at: expect.any(String), handled_by: expect.any(String) });
    expect(marks[1]!.body.data).toEqual(marks[0]!.body.data);
    const again = await markHandled(sent.id);
    expect(again.body.data).toEqual(marks[0]!.body.data);
    expect((await attention()).body.data.feedback_inbox.map((r: any) => r.id)).not.toContain(sent.id);

    expectError(await markHandled(randomUUID()), 404, 'FEEDBACK_NOT_FOUND');
    expectError(await markHandled('nope'), 404, 'FEEDBACK_NOT_FOUND');
  });
});

describe('a team on its way out', () => {
  it('is not in the stuck queue once its deletion is requested', async () => {
    const t = await teamWithOwner();
    await backdateTeam(t.team.id, 30);
    const ids = async () => (await attention()).body.data.stuck_activation.no_projects.map((r: any) => r.id);
    expect(await ids()).toContain(t.team.id);
    expect(
      (await platform.api('POST', '/api/v1/team/deletion', { token: t.owner.token, headers: { 'x-team-id': t.team.id } })).status,
    ).toBeLessThan(300);
    expect(await ids()).not.toContain(t.team.id);
  });

  it('the purge removes its attention state and the references of its feedback', async () => {
    const t = await teamWithOwner();
    const sent = (await sendFeedback(t.owner.token, { message: 'Bye.' })).body.data;
    expect((await setSubscription(t.team.id, { plan: 'pro', status: 'active', cancel_at_period_end: true })).status).toBe(200);
    expect(
      (await platform.api('POST', '/api/v1/team/deletion', { token: t.owner.token, headers: { 'x-team-id': t.team.id } })).status,
    ).toBeLessThan(300);
    expect(await purgeTeam(t.team.id, new Date(Date.now() + 400 * DAY))).toBe('purged');
    const get = async (key: Record<string, string>) =>
      (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: key, ConsistentRead: true }))).Item;
    expect(await get(keys.teamAttention(t.team.id))).toBeUndefined();
    expect(await get(keys.feedbackRef(sent.id))).toBeUndefined();
    const data = (await attention()).body.data;
    expect(data.feedback_inbox.map((r: any) => r.id)).not.toContain(sent.id);
    expect(data.billing_attention.cancelling.map((r: any) => r.team_id)).not.toContain(t.team.id);
    expectError(await markHandled(sent.id), 404, 'FEEDBACK_NOT_FOUND');
  });
});

import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { signatureHeader } from '../../lib/billing/signature.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { createTeam } from '../../lib/teams/teams.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeUser, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { uniqueName } from '../support/uploads.ts';

/**
 * POST /api/v1/webhooks/billing: Stripe's subscription events, signed with the
 * endpoint secret, move teams between the billing attention queues; signed
 * events that cannot be processed land in `failed_webhook_events`; unsigned
 * ones change and record nothing; a redelivered event applies once.
 */

const PATH = '/api/v1/webhooks/billing';
let platform: TestPlatform;
let admin: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  admin = (await makeUser({ platformAdmin: true })).token;
}, 60_000);
afterAll(async () => {
  await platform?.stop();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);
const secret = () => platform.env.BILLING_WEBHOOK_SECRET!;

function stripeEvent(type: string, object: Record<string, unknown>, options: { id?: string; created?: number } = {}) {
  return {
    id: options.id ?? `evt_${randomUUID().replaceAll('-', '')}`,
    object: 'event',
    api_version: '2024-06-20',
    created: options.created ?? nowSeconds(),
    livemode: false,
    type,
    data: { object },
  };
}

function subscriptionObject(teamId: string, over: Record<string, unknown> = {}) {
  return {
    id: 'sub_1PqRsT',
    object: 'subscription',
    status: 'active',
    cancel_at_period_end: false,
    created: 1_735_689_600, // 2025-01-01T00:00:00Z
    customer: 'cus_123',
    metadata: { team_id: teamId },
    items: { object: 'list', data: [{ id: 'si_1', object: 'subscription_item', price: { id: 'price_1', lookup_key: 'pro_monthly' } }] },
    ...over,
  };
}

/** Delivers as Stripe does: the raw JSON, and a signature over exactly those bytes. */
function deliver(event: unknown, options: { signature?: string | null; headers?: Record<string, string>; body?: string } = {}) {
  const body = options.body ?? JSON.stringify(event);
  const signature = options.signature === undefined ? signatureHeader(secret(), body) : options.signature;
  return platform.api('POST', PATH, {
    rawBody: body,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...(signature === null ? {} : { 'stripe-signature': signature }),
      ...options.headers,
    },
  });
}

const attention = async () => (await platform.api('GET', '/api/v1/admin/attention', { token: admin })).body.data;
const listsHolding = (data: any, teamId: string) =>
  Object.entries(data.billing_attention)
    .filter(([, rows]) => (rows as any[]).some((r) => r.team_id === teamId))
    .map(([name]) => name);
const failedRow = (data: any, eventId: string) => data.failed_webhook_events.find((r: any) => r.provider_event_id === eventId);

async function newTeam() {
  const owner = await makeUser({ name: 'Billing Owner' });
  const team = await createTeam({ name: uniqueName('Billing'), ownerUserId: owner.user.user_id });
  return { team, owner };
}

async function attentionItem(teamId: string) {
  return (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.teamAttention(teamId), ConsistentRead: true })))
    .Item!;
}

describe('who may deliver', () => {
  it('needs no credential, but a valid Stripe-Signature: missing, malformed, wrong secret, tampered body and expired t are 400 and change and record nothing', async () => {
    const { team } = await newTeam();
    const event = stripeEvent('customer.subscription.created', subscriptionObject(team.id, { status: 'past_due' }));
    const body = JSON.stringify(event);
    const t = nowSeconds();
    const refusals: [string | null, string, string?][] = [
      [null, 'missing'],
      ['', 'missing'],
      ['v1=abc', 'malformed'],
      [`t=${t}`, 'malformed'],
      [signatureHeader('whsec_not_the_endpoint_secret', body, t), 'no_matching_signature'],
      // Signed, then changed on the way: the signature no longer covers the bytes.
      [signatureHeader(secret(), body, t), 'no_matching_signature', body.replace('past_due', 'active')],
      // Well outside the 300 s either way (the exact bounds: test/unit/billing-webhook.test.ts).
      [signatureHeader(secret(), body, t - 400), 'timestamp_outside_tolerance'],
      [signatureHeader(secret(), body, t + 400), 'timestamp_outside_tolerance'],
    ];
    for (const [signature, reason, sentBody] of refusals) {
      const reply = await deliver(event, { signature, body: sentBody });
      expectError(reply, 400, 'WEBHOOK_SIGNATURE_INVALID');
      expect(reply.body.details).toEqual({ reason });
    }
    // A platform administrator's session is no signature either.
    const withSession = await platform.api('POST', PATH, { token: admin, rawBody: body, headers: { 'content-type': 'application/json' } });
    expectError(withSession, 400, 'WEBHOOK_SIGNATURE_INVALID');

    const data = await attention();
    expect(failedRow(data, event.id)).toBeUndefined();
    expect(listsHolding(data, team.id)).toEqual([]);
    expect((await attentionItem(team.id)).sub_status).toBeUndefined();

    // The same event, properly signed, without any credential: applied.
    const accepted = await deliver(event);
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ event_id: event.id, event_type: 'customer.subscription.created', outcome: 'applied' });
    expect(listsHolding(await attention(), team.id)).toEqual(['past_due']);
  });

  it('a signed body that is not an event is 400 WEBHOOK_PAYLOAD_INVALID and not recorded; other methods 405', async () => {
    expectError(await deliver(null, { body: 'not json' }), 400, 'WEBHOOK_PAYLOAD_INVALID');
    expectError(await deliver({ type: 'customer.subscription.updated' }), 400, 'WEBHOOK_PAYLOAD_INVALID');
    const get = await platform.api('GET', PATH);
    expectError(get, 405, 'METHOD_NOT_ALLOWED');
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('subscription events', () => {
  it('created, updated and deleted move the team through the billing queues; an event from before the last one changes nothing', async () => {
    const { team, owner } = await newTeam();
    const t0 = nowSeconds() - 60;
    const created = stripeEvent('customer.subscription.created', subscriptionObject(team.id, { status: 'incomplete' }), { created: t0 });
    const reply = await deliver(created);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      event_id: created.id,
      event_type: 'customer.subscription.created',
      outcome: 'applied',
      subscription: {
        team_id: team.id,
        plan: 'pro',
        status: 'incomplete',
        cancel_at_period_end: false,
        created_at: '2025-01-01T00:00:00.000Z',
        updated_at: expect.any(String),
        subscription_count: 1,
        last_successful_deploy_at: null,
      },
    });
    let data = await attention();
    expect(listsHolding(data, team.id)).toEqual(['pending_payment']);
    expect(data.billing_attention.pending_payment.find((r: any) => r.team_id === team.id)).toEqual({
      age_days: Math.floor((Date.now() - Date.parse('2025-01-01T00:00:00Z')) / 86_400_000),
      cancel_at_period_end: false,
      created_at: '2025-01-01T00:00:00.000Z',
      last_successful_deploy_at: null,
      owner_email: owner.user.email,
      plan: 'pro',
      status: 'incomplete',
      subscription_count: 1,
      team_id: team.id,
      team_name: team.name,
    });

    // Paid, then set to cancel at the period's end; metadata.plan wins over the price's lookup key.
    const cancelling = stripeEvent(
      'customer.subscription.updated',
      subscriptionObject(team.id, { status: 'active', cancel_at_period_end: true, metadata: { team_id: team.id, plan: 'team' } }),
      { created: t0 + 10 },
    );
    expect((await deliver(cancelling)).body.data.outcome).toBe('applied');
    data = await attention();
    expect(listsHolding(data, team.id)).toEqual(['cancelling']);
    expect(data.billing_attention.cancelling.find((r: any) => r.team_id === team.id)).toMatchObject({
      plan: 'team',
      status: 'active',
      cancel_at_period_end: true,
    });

    const pastDue = stripeEvent('customer.subscription.updated', subscriptionObject(team.id, { status: 'past_due' }), { created: t0 + 20 });
    expect((await deliver(pastDue)).body.data.outcome).toBe('applied');
    expect(listsHolding(await attention(), team.id)).toEqual(['past_due']);

    const deleted = stripeEvent('customer.subscription.deleted', subscriptionObject(team.id, { status: 'canceled' }), { created: t0 + 30 });
    const gone = await deliver(deleted);
    expect(gone.body.data).toMatchObject({ outcome: 'applied', subscription: { status: 'canceled', subscription_count: 1 } });
    expect(listsHolding(await attention(), team.id)).toEqual([]);

    // Stripe does not deliver in order: the "updated" of before the deletion, arriving now, is out of date.
    const late = stripeEvent('customer.subscription.updated', subscriptionObject(team.id, { status: 'active' }), { created: t0 + 25 });
    expect((await deliver(late)).body.data).toEqual({ event_id: late.id, event_type: 'customer.subscription.updated', outcome: 'stale' });
    expect((await attentionItem(team.id)).sub_status).toBe('canceled');

    // A new subscription after the ended one counts as the team's second.
    const again = stripeEvent('customer.subscription.created', subscriptionObject(team.id, { id: 'sub_2', status: 'active' }), {
      created: t0 + 40,
    });
    expect((await deliver(again)).body.data).toMatchObject({
      outcome: 'applied',
      subscription: { status: 'active', subscription_count: 2 },
    });
    expect(listsHolding(await attention(), team.id)).toEqual(['paying_idle']);
  });

  it('other event types are answered 200 and ignored', async () => {
    const { team } = await newTeam();
    const event = stripeEvent('invoice.paid', { id: 'in_1', object: 'invoice', metadata: { team_id: team.id } });
    const reply = await deliver(event);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ event_id: event.id, event_type: 'invoice.paid', outcome: 'ignored' });
    expect(failedRow(await attention(), event.id)).toBeUndefined();
  });
});

describe('failed events', () => {
  it('an unknown team, a status not tracked and a malformed object are recorded with the spec fields and answered 200 (a retry cannot help)', async () => {
    const unknownTeam = randomUUID();
    const unknown = stripeEvent('customer.subscription.updated', subscriptionObject(unknownTeam));
    const reply = await deliver(unknown);
    expect(reply.status).toBe(200);
    const message = `No team ${unknownTeam} (metadata.team_id of the subscription): it does not exist or was deleted.`;
    expect(reply.body.data).toEqual({
      event_id: unknown.id,
      event_type: 'customer.subscription.updated',
      outcome: 'failed',
      failed_webhook_event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      error_message: message,
    });
    const row = failedRow(await attention(), unknown.id);
    expect(row).toEqual({
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      error_message: message,
      event_type: 'customer.subscription.updated',
      id: reply.body.data.failed_webhook_event_id,
      provider_event_id: unknown.id,
    });
    expect(Object.keys(row).sort()).toEqual(['created_at', 'error_message', 'event_type', 'id', 'provider_event_id']);

    // Redelivered, it fails again: still one row, with its first id and created_at.
    expect((await deliver(unknown)).body.data.failed_webhook_event_id).toBe(row.id);
    const rows = (await attention()).failed_webhook_events.filter((r: any) => r.provider_event_id === unknown.id);
    expect(rows).toEqual([row]);

    const { team } = await newTeam();
    const paused = stripeEvent('customer.subscription.updated', subscriptionObject(team.id, { status: 'paused' }));
    expect((await deliver(paused)).body.data.outcome).toBe('failed');
    const malformed = stripeEvent('customer.subscription.created', {
      id: 'sub_x',
      object: 'subscription',
      metadata: { team_id: team.id },
      status: 'active',
    });
    expect((await deliver(malformed)).body.data.outcome).toBe('failed');
    const data = await attention();
    expect(failedRow(data, paused.id)).toMatchObject({
      event_type: 'customer.subscription.updated',
      error_message:
        'Subscription sub_1PqRsT: status "paused" is not one Slipway tracks (active, trialing, past_due, unpaid, incomplete, incomplete_expired, canceled).',
    });
    expect(failedRow(data, malformed.id)).toMatchObject({
      event_type: 'customer.subscription.created',
      error_message: 'Subscription sub_x: cancel_at_period_end is not a boolean.',
    });
    expect(listsHolding(data, team.id)).toEqual([]);
  });

  it('a write that fails on our side is recorded and answered 503 so Stripe retries; the retry that succeeds clears the row', async () => {
    const { team } = await newTeam();
    // A version that is no number makes every conditional write of the item fail: the versioned write gives up.
    const setVersion = (version: unknown) =>
      dynamo().send(
        new UpdateCommand({
          TableName: config.tableName(),
          Key: keys.teamAttention(team.id),
          UpdateExpression: 'SET version = :v',
          ExpressionAttributeValues: { ':v': version },
        }),
      );
    await setVersion('corrupt');
    const event = stripeEvent('customer.subscription.created', subscriptionObject(team.id, { status: 'past_due' }));
    const reply = await deliver(event);
    expectError(reply, 503, 'WEBHOOK_EVENT_NOT_PROCESSED');
    expect(reply.body.details).toEqual({ event_id: event.id, reason: 'SUBSCRIPTION_CHANGED' });
    expect(failedRow(await attention(), event.id)).toMatchObject({
      event_type: 'customer.subscription.created',
      error_message: 'Not processed (SUBSCRIPTION_CHANGED): the subscription could not be written; the provider delivers the event again.',
    });

    await setVersion(7);
    const retried = await deliver(event);
    expect(retried.body.data).toMatchObject({ outcome: 'applied', subscription: { status: 'past_due' } });
    const data = await attention();
    expect(failedRow(data, event.id)).toBeUndefined();
    expect(listsHolding(data, team.id)).toEqual(['past_due']);
  }, 30_000);
});

describe('redelivery', () => {
  it('two deliveries of one event at once apply it once: one "applied", the other "duplicate", one version step', async () => {
    for (let round = 0; round < 3; round++) {
      const { team } = await newTeam();
      const before = (await attentionItem(team.id)).version as number;
      const event = stripeEvent('customer.subscription.created', subscriptionObject(team.id, { status: 'past_due' }));
      const body = JSON.stringify(event);
      const signature = signatureHeader(secret(), body);
      const replies = await Promise.all([deliver(event, { body, signature }), deliver(event, { body, signature })]);
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      expect(replies.map((r) => r.body.data.outcome).sort()).toEqual(['applied', 'duplicate']);
      const item = await attentionItem(team.id);
      expect(item.version).toBe(before + 1);
      expect(item.subscription_count).toBe(1);
      const marker = (
        await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.processedWebhookEvent('stripe', event.id) }))
      ).Item!;
      expect(marker).toMatchObject({ provider_event_id: event.id, team_id: team.id, event_type: 'customer.subscription.created' });
      expect(marker.ttl).toBeGreaterThan(nowSeconds() + 29 * 86_400);

      // Later, once more (Stripe's retry of a delivery whose 200 it never saw): still once.
      const later = await deliver(event);
      expect(later.body.data).toEqual({ event_id: event.id, event_type: 'customer.subscription.created', outcome: 'duplicate' });
      expect((await attentionItem(team.id)).version).toBe(before + 1);
    }
  }, 30_000);
});

describe('admin actions on failed events (retry, dismiss)', () => {
  const act =
    (action: string) =>
    (id: string, token: string | null = admin) =>
      platform.api('POST', `/api/v1/admin/failed-webhook-events/${id}`, { token: token ?? undefined, body: { action } });
  const retry = act('retry');
  const dismiss = act('dismiss');
  const corruptVersion = (teamId: string, version: unknown) =>
    dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.teamAttention(teamId),
        UpdateExpression: 'SET version = :v',
        ExpressionAttributeValues: { ':v': version },
      }),
    );
  /** An event recorded as failed on our side (its team's subscription cannot be written), with its row's id. */
  async function failedOnOurSide() {
    const { team } = await newTeam();
    await corruptVersion(team.id, 'corrupt');
    const event = stripeEvent('customer.subscription.created', subscriptionObject(team.id, { status: 'past_due' }));
    expectError(await deliver(event), 503, 'WEBHOOK_EVENT_NOT_PROCESSED');
    const row = failedRow(await attention(), event.id);
    expect(row).toBeDefined();
    return { team, event, row };
  }

  it('retry processes the kept event again: once the cause is fixed it applies and the row leaves the queue', async () => {
    const { team, event, row } = await failedOnOurSide();
    // Still broken: a failure on our side again, answered as a delivery is; the row stays, with its id.
    expectError(await retry(row.id), 503, 'WEBHOOK_EVENT_NOT_PROCESSED');
    expect(failedRow(await attention(), event.id)).toMatchObject({ id: row.id });

    await corruptVersion(team.id, 7);
    const reply = await retry(row.id);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({
      id: row.id,
      provider_event_id: event.id,
      event_type: 'customer.subscription.created',
      action: 'retry',
      outcome: 'applied',
      subscription: { status: 'past_due' },
    });
    const data = await attention();
    expect(failedRow(data, event.id)).toBeUndefined();
    expect(listsHolding(data, team.id)).toEqual(['past_due']);
    // The row is gone: a second retry finds nothing, and a delivery of the same event applies nothing twice.
    expectError(await retry(row.id), 404, 'FAILED_WEBHOOK_EVENT_NOT_FOUND');
    expect((await deliver(event)).body.data.outcome).toBe('duplicate');
  });

  it('retry of an event that still cannot be processed keeps the row (same id) with the new sentence', async () => {
    const { team } = await newTeam();
    const paused = stripeEvent('customer.subscription.updated', subscriptionObject(team.id, { status: 'paused' }));
    const id = (await deliver(paused)).body.data.failed_webhook_event_id;
    const reply = await retry(id);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ id, provider_event_id: paused.id, outcome: 'failed', failed_webhook_event_id: id });
    expect(failedRow(await attention(), paused.id)).toMatchObject({ id });
  });

  it('dismiss takes the row out of the queue unprocessed; a second dismissal or a retry of it is 404', async () => {
    const { team, event, row } = await failedOnOurSide();
    const reply = await dismiss(row.id);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      id: row.id,
      provider_event_id: event.id,
      event_type: 'customer.subscription.created',
      action: 'dismiss',
      dismissed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      dismissed_by: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const data = await attention();
    expect(failedRow(data, event.id)).toBeUndefined();
    expect(listsHolding(data, team.id)).toEqual([]);
    expectError(await dismiss(row.id), 404, 'FAILED_WEBHOOK_EVENT_NOT_FOUND');
    expectError(await retry(row.id), 404, 'FAILED_WEBHOOK_EVENT_NOT_FOUND');
  });

  it('racing admin actions: two dismissals remove the row once (one 200, one 404); two retries apply the event once', async () => {
    const first = await failedOnOurSide();
    const dismissals = await Promise.all([dismiss(first.row.id), dismiss(first.row.id)]);
    expect(dismissals.map((r) => r.status).sort()).toEqual([200, 404]);

    const second = await failedOnOurSide();
    await corruptVersion(second.team.id, 3);
    const retries = await Promise.all([retry(second.row.id), retry(second.row.id), retry(second.row.id)]);
    const outcomes = retries.filter((r) => r.status === 200).map((r) => r.body.data.outcome);
    expect(outcomes.filter((o) => o === 'applied')).toHaveLength(1);
    for (const r of retries) if (r.status !== 200) expectError(r, 404, 'FAILED_WEBHOOK_EVENT_NOT_FOUND');
    expect((await attentionItem(second.team.id)).version).toBe(4);
    expect(failedRow(await attention(), second.event.id)).toBeUndefined();
  });

  it('a row kept without its event (too large, or recorded before events were kept) is 409 FAILED_WEBHOOK_EVENT_NOT_RETRYABLE, and can be dismissed', async () => {
    const { recordFailedWebhookEvent } = await import('../../lib/attention/webhooks.ts');
    const row = await recordFailedWebhookEvent({
      provider: 'stripe',
      providerEventId: `evt_${randomUUID()}`,
      eventType: 'customer.subscription.updated',
      errorMessage: 'Old row.',
    });
    expectError(await retry(row.id), 409, 'FAILED_WEBHOOK_EVENT_NOT_RETRYABLE');
    expect((await dismiss(row.id)).status).toBe(200);
  });

  it('400 for an id that is not a UUID or an action that is neither; 404 for an unknown id; 403 for everyone but platform administrators; 401 without a token', async () => {
    const { row } = await failedOnOurSide();
    for (const body of [{}, { action: 'replay' }, { action: 'retry', extra: 1 }]) {
      expectError(
        await platform.api('POST', `/api/v1/admin/failed-webhook-events/${row.id}`, { token: admin, body }),
        400,
        'VALIDATION_FAILED',
      );
    }
    for (const call of [retry, dismiss]) {
      expectError(await call('not-an-id'), 400, 'FAILED_WEBHOOK_EVENT_ID_INVALID');
      expectError(await call(randomUUID()), 404, 'FAILED_WEBHOOK_EVENT_NOT_FOUND');
      expectError(await call(row.id, (await makeUser()).token), 403, 'PLATFORM_ADMIN_REQUIRED');
      expectError(await call(row.id, null), 401, 'UNAUTHENTICATED');
    }
    expect(failedRow(await attention(), row.provider_event_id)).toMatchObject({ id: row.id });
  });
});

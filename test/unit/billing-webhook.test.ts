import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeader, verifySignature } from '../../lib/billing/signature.ts';
import {
  providerEventOf,
  subscriptionChangeOf,
  type ProviderEvent,
  type SubscriptionEventType,
} from '../../lib/billing/subscription-events.ts';

const secret = 'whsec_unit_test_secret';
const body = Buffer.from('{"id":"evt_1","type":"customer.subscription.updated"}');
const now = 1_800_000_000;
const hmac = (key: string, t: number, payload: Buffer) =>
  createHmac('sha256', key)
    .update(`${t}.${payload.toString('utf8')}`)
    .digest('hex');

describe('Stripe-Signature verification', () => {
  it('accepts the scheme as Stripe documents it: v1 = hex HMAC-SHA256 of "t.body"', () => {
    expect(verifySignature(`t=${now},v1=${hmac(secret, now, body)}`, body, secret, now)).toBeNull();
    expect(signatureHeader(secret, body, now)).toBe(`t=${now},v1=${hmac(secret, now, body)}`);
  });

  it('accepts any matching v1 among several (a rolled secret) and ignores v0', () => {
    const header = `t=${now},v1=${hmac('whsec_old', now, body)},v1=${hmac(secret, now, body)},v0=${'0'.repeat(64)}`;
    expect(verifySignature(header, body, secret, now)).toBeNull();
    expect(verifySignature(header, body, 'whsec_old', now)).toBeNull();
  });

  it('says why it refuses', () => {
    const good = hmac(secret, now, body);
    expect(verifySignature(undefined, body, secret, now)).toBe('missing');
    expect(verifySignature('  ', body, secret, now)).toBe('missing');
    expect(verifySignature(`v1=${good}`, body, secret, now)).toBe('malformed');
    expect(verifySignature(`t=${now}`, body, secret, now)).toBe('malformed');
    expect(verifySignature(`t=${now},t=${now},v1=${good}`, body, secret, now)).toBe('malformed');
    expect(verifySignature(`t=abc,v1=${good}`, body, secret, now)).toBe('malformed');
    expect(verifySignature(`t=${now},v1=xyz`, body, secret, now)).toBe('malformed');
    expect(verifySignature(`t=${now},garbage`, body, secret, now)).toBe('malformed');
    expect(verifySignature(`t=${now},v0=${good}`, body, secret, now)).toBe('malformed');
    expect(verifySignature(`t=${now},v1=${hmac('whsec_other', now, body)}`, body, secret, now)).toBe('no_matching_signature');
    expect(verifySignature(`t=${now},v1=${good}`, Buffer.concat([body, Buffer.from(' ')]), secret, now)).toBe('no_matching_signature');
    // The timestamp is signed: moving it breaks the signature.
    expect(verifySignature(`t=${now + 1},v1=${good}`, body, secret, now)).toBe('no_matching_signature');
  });

  it('holds t to 300 seconds either way', () => {
    for (const t of [now - 300, now + 300]) expect(verifySignature(`t=${t},v1=${hmac(secret, t, body)}`, body, secret, now)).toBeNull();
    for (const t of [now - 301, now + 301]) {
      expect(verifySignature(`t=${t},v1=${hmac(secret, t, body)}`, body, secret, now)).toBe('timestamp_outside_tolerance');
    }
  });
});

const TEAM = '6f1c8a52-3c1e-4a43-9a4e-0d8f2b8f7a11';
const subscription = (over: Record<string, unknown> = {}) => ({
  id: 'sub_1',
  object: 'subscription',
  status: 'active',
  cancel_at_period_end: false,
  created: 1_700_000_000,
  metadata: { team_id: TEAM },
  items: { object: 'list', data: [{ price: { lookup_key: 'pro_monthly' } }] },
  ...over,
});
const eventOf = (type: SubscriptionEventType, object: unknown, created: number | null = 1_700_000_100) =>
  ({ id: 'evt_1', type, created, object }) as ProviderEvent & { type: SubscriptionEventType };
const at = new Date('2026-01-01T00:00:00Z');

describe('subscription events', () => {
  it('reads the envelope of an event, or nothing without an id and a type', () => {
    expect(providerEventOf({ id: 'evt_1', type: 'invoice.paid', created: 5, data: { object: { a: 1 } } })).toEqual({
      id: 'evt_1',
      type: 'invoice.paid',
      created: 5,
      object: { a: 1 },
    });
    expect(providerEventOf({ type: 'invoice.paid' })).toBeNull();
    expect(providerEventOf({ id: 'evt_1' })).toBeNull();
    expect(providerEventOf([1])).toBeNull();
    expect(providerEventOf('x')).toBeNull();
  });

  it('maps a subscription: plan from a price lookup_key, created in epoch seconds, the event time', () => {
    expect(subscriptionChangeOf(eventOf('customer.subscription.created', subscription()), at)).toEqual({
      ok: true,
      teamId: TEAM,
      input: {
        plan: 'pro',
        status: 'active',
        cancel_at_period_end: false,
        created_at: '2023-11-14T22:13:20.000Z',
        source_event_at: '2023-11-14T22:15:00.000Z',
      },
    });
  });

  it('takes metadata.plan before the prices, and reads lookup keys "team", "team-yearly"', () => {
    const byMetadata = subscriptionChangeOf(
      eventOf('customer.subscription.updated', subscription({ metadata: { team_id: TEAM, plan: 'team' } })),
      at,
    );
    expect(byMetadata.ok && byMetadata.input.plan).toBe('team');
    for (const key of ['team', 'team-yearly']) {
      const change = subscriptionChangeOf(
        eventOf('customer.subscription.updated', subscription({ items: { data: [{ price: { lookup_key: key } }] } })),
        at,
      );
      expect(change.ok && change.input.plan).toBe('team');
    }
  });

  it('a deleted subscription is canceled whatever status it shows; a future created is held to now', () => {
    const change = subscriptionChangeOf(
      eventOf('customer.subscription.deleted', subscription({ status: 'active', created: 4_000_000_000 })),
      at,
    );
    expect(change).toMatchObject({ ok: true, input: { status: 'canceled', created_at: '2026-01-01T00:00:00.000Z' } });
  });

  it('refuses with a sentence what it cannot map', () => {
    const refusal = (object: unknown) => subscriptionChangeOf(eventOf('customer.subscription.updated', object), at);
    expect(refusal({ object: 'invoice' })).toEqual({ ok: false, error: 'data.object is not a subscription object.' });
    expect(refusal(undefined)).toEqual({ ok: false, error: 'data.object is not a subscription object.' });
    expect(refusal(subscription({ metadata: {} }))).toEqual({ ok: false, error: 'Subscription sub_1 has no metadata.team_id.' });
    expect(refusal(subscription({ metadata: { team_id: 'acme' } }))).toEqual({
      ok: false,
      error: 'Subscription sub_1: metadata.team_id "acme" is not a team UUID.',
    });
    expect(refusal(subscription({ status: 'paused' }))).toEqual({
      ok: false,
      error:
        'Subscription sub_1: status "paused" is not one Slipway tracks (active, trialing, past_due, unpaid, incomplete, incomplete_expired, canceled).',
    });
    expect(refusal(subscription({ cancel_at_period_end: 'yes' }))).toEqual({
      ok: false,
      error: 'Subscription sub_1: cancel_at_period_end is not a boolean.',
    });
    expect(refusal(subscription({ created: '2024-01-01' }))).toEqual({
      ok: false,
      error: 'Subscription sub_1: created is not a time in epoch seconds.',
    });
    const noPlan = {
      ok: false,
      error: 'Subscription sub_1: no plan: metadata.plan or a price lookup_key must name one of free, pro, team.',
    };
    expect(refusal(subscription({ items: { data: [{ price: { lookup_key: 'enterprise' } }] } }))).toEqual(noPlan);
    expect(refusal(subscription({ metadata: { team_id: TEAM, plan: 'gold' } }))).toEqual(noPlan);
  });
});

import { SUBSCRIPTION_STATUSES, type SubscriptionInput, type SubscriptionStatus } from '../attention/team-state.ts';
import { plans, type PlanName } from '../plans.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { isJsonObject, type JsonObject } from '../json.ts';

/**
 * What a billing provider's subscription event means for a team's
 * subscription record: Stripe's `customer.subscription.*` events mapped onto
 * the input of the admin subscription command (docs/attention.md has the
 * table). Pure, so every refusal is a sentence the failed-webhook queue shows.
 */

/** The event types that change a subscription; any other type is answered 200 and ignored. */
export const SUBSCRIPTION_EVENT_TYPES = [
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
] as const;
export type SubscriptionEventType = (typeof SUBSCRIPTION_EVENT_TYPES)[number];

export const isSubscriptionEventType = (type: string): type is SubscriptionEventType =>
  (SUBSCRIPTION_EVENT_TYPES as readonly string[]).includes(type);

/** The envelope fields every provider event has; without them it cannot even be recorded. */
export interface ProviderEvent {
  id: string;
  type: string;
  /** Epoch seconds. */
  created: number | null;
  object: unknown;
}

export function providerEventOf(parsed: unknown): ProviderEvent | null {
  if (!isJsonObject(parsed)) return null;
  const { id, type, created, data } = parsed;
  if (typeof id !== 'string' || id.length === 0 || id.length > 255 || typeof type !== 'string' || type.length === 0 || type.length > 255)
    return null;
  return {
    id,
    type,
    created: Number.isInteger(created) && (created as number) > 0 ? (created as number) : null,
    object: isJsonObject(data) ? data.object : undefined,
  };
}

export type SubscriptionChange = { ok: true; teamId: string; input: SubscriptionInput } | { ok: false; error: string };

/**
 * The team and subscription an event describes. The plan is the
 * subscription's `metadata.plan`, else the `lookup_key` of one of its prices:
 * the plan's name itself or the name followed by `_` or `-` and anything
 * (`pro`, `pro_monthly`, `team-yearly`).
 */
export function subscriptionChangeOf(event: ProviderEvent & { type: SubscriptionEventType }, now = new Date()): SubscriptionChange {
  const sub = event.object;
  if (!isJsonObject(sub) || sub.object !== 'subscription') return { ok: false, error: 'data.object is not a subscription object.' };
  const name = typeof sub.id === 'string' ? `Subscription ${sub.id}` : 'The subscription';

  const metadata = isJsonObject(sub.metadata) ? sub.metadata : {};
  const teamId = metadata.team_id;
  if (typeof teamId !== 'string' || teamId === '') return { ok: false, error: `${name} has no metadata.team_id.` };
  if (!UUID_PATTERN.test(teamId))
    return { ok: false, error: `${name}: metadata.team_id ${JSON.stringify(teamId.slice(0, 100))} is not a team UUID.` };

  // A deleted subscription is over whatever status the object still shows.
  const status = event.type === 'customer.subscription.deleted' ? 'canceled' : sub.status;
  if (typeof status !== 'string' || !(SUBSCRIPTION_STATUSES as readonly string[]).includes(status)) {
    return {
      ok: false,
      error: `${name}: status ${JSON.stringify(String(status).slice(0, 50))} is not one Slipway tracks (${SUBSCRIPTION_STATUSES.join(', ')}).`,
    };
  }
  if (typeof sub.cancel_at_period_end !== 'boolean') return { ok: false, error: `${name}: cancel_at_period_end is not a boolean.` };
  if (!Number.isInteger(sub.created) || (sub.created as number) <= 0)
    return { ok: false, error: `${name}: created is not a time in epoch seconds.` };

  const plan = planOf(sub);
  if (!plan) {
    return {
      ok: false,
      error: `${name}: no plan: metadata.plan or a price lookup_key must name one of ${Object.keys(plans).join(', ')}.`,
    };
  }

  // A provider clock ahead of ours (or a test clock) must not make a subscription start in the future.
  const createdAt = new Date(Math.min((sub.created as number) * 1000, now.getTime())).toISOString();
  return {
    ok: true,
    teamId: teamId.toLowerCase(),
    input: {
      plan,
      status: status as SubscriptionStatus,
      cancel_at_period_end: sub.cancel_at_period_end,
      created_at: createdAt,
      source_event_at: event.created === null ? undefined : new Date(event.created * 1000).toISOString(),
    },
  };
}

function planOf(sub: JsonObject): PlanName | null {
  const named = isJsonObject(sub.metadata) ? sub.metadata.plan : undefined;
  if (named !== undefined) return typeof named === 'string' && isPlanName(named) ? named : null;
  const items = isJsonObject(sub.items) && Array.isArray(sub.items.data) ? sub.items.data : [];
  for (const item of items) {
    const key = isJsonObject(item) && isJsonObject(item.price) ? item.price.lookup_key : undefined;
    if (typeof key !== 'string') continue;
    const plan = /^([a-z]+)(?:[_-].*)?$/.exec(key)?.[1];
    if (plan && isPlanName(plan)) return plan;
  }
  return null;
}

const isPlanName = (name: string): name is PlanName => Object.hasOwn(plans, name);

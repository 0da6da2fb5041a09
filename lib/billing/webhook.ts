import { AlreadyWritten, setTeamSubscription, type Subscription } from '../attention/team-state.ts';
import type { StoredFailedWebhookEvent } from '../attention/webhook-records.ts';
import { clearFailedWebhookEvent, recordFailedWebhookEvent } from '../attention/webhooks.ts';
import { epochSeconds } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { FAILED_WEBHOOK_EVENT_NOT_RETRYABLE, WEBHOOK_EVENT_NOT_PROCESSED } from '../errors/catalogue/admin.ts';
import type { RequestLogger } from '../logger.ts';
import { getTeam } from '../teams/teams.ts';
import { processedEventItem, wasEventProcessed } from './records.ts';
import { isSubscriptionEventType, providerEventOf, subscriptionChangeOf, type ProviderEvent } from './subscription-events.ts';

/**
 * What the billing webhook does with a verified event (POST /api/v1/webhooks/billing,
 * docs/attention.md). The provider retries every delivery that is not
 * answered 2xx, for days, so the answer says whether a retry can help:
 *
 * - applied, a duplicate, out of date, or of a type we do not handle: 200;
 * - one that can never be processed (malformed subscription, unknown team,
 *   a status we do not track): recorded in the failed-webhook queue and
 *   answered 200 with outcome `failed`, since a retry would fail the same way;
 * - one whose processing failed on our side (the table, a write that kept
 *   conflicting): recorded, and answered 503 so the provider delivers it again.
 */

export const BILLING_PROVIDER = 'stripe';

/** How long an applied event is remembered; the provider retries for 3 days and its dashboard resends events up to 30 days old. */
export const PROCESSED_EVENT_RETENTION_DAYS = 30;

export type BillingEventOutcome =
  | { outcome: 'applied'; subscription: Subscription }
  | { outcome: 'duplicate' | 'stale' | 'ignored' }
  | { outcome: 'failed'; failed_webhook_event_id: string; error_message: string };

export async function receiveBillingEvent(event: ProviderEvent, log: RequestLogger, now = new Date()): Promise<BillingEventOutcome> {
  if (!isSubscriptionEventType(event.type)) return { outcome: 'ignored' };
  const eventType = event.type;

  const change = subscriptionChangeOf({ ...event, type: eventType }, now);
  if (!change.ok) return failForGood(event, change.error, log);

  let team;
  try {
    // The transaction below is what guarantees once; this read only spares a redelivery the team check.
    if (await wasEventProcessed(BILLING_PROVIDER, event.id)) return settled(event, { outcome: 'duplicate' }, log);
    team = await getTeam(change.teamId);
  } catch (error) {
    return notProcessed(event, error, log);
  }
  if (!team)
    return failForGood(event, `No team ${change.teamId} (metadata.team_id of the subscription): it does not exist or was deleted.`, log);

  const marker = processedEventItem({
    provider: BILLING_PROVIDER,
    providerEventId: event.id,
    eventType: event.type,
    teamId: change.teamId,
    processedAt: now,
    expiresEpoch: epochSeconds(now) + PROCESSED_EVENT_RETENTION_DAYS * 86_400,
  });
  let subscription: Subscription | null;
  try {
    subscription = await setTeamSubscription(change.teamId, change.input, now, { once: marker });
  } catch (error) {
    if (error instanceof AlreadyWritten) return settled(event, { outcome: 'duplicate' }, log);
    return notProcessed(event, error, log);
  }
  return settled(event, subscription ? { outcome: 'applied', subscription } : { outcome: 'stale' }, log);
}

/**
 * The event needs nothing more: an earlier delivery of it that failed on our side (or whose 200 was
 * lost after the write) is resolved, and its row in the failed-webhook queue would only mislead.
 */
async function settled(event: ProviderEvent, outcome: BillingEventOutcome, log: RequestLogger): Promise<BillingEventOutcome> {
  try {
    await clearFailedWebhookEvent(BILLING_PROVIDER, event.id);
  } catch (error) {
    log.warn('failed webhook event not cleared', { event_id: event.id, error: (error as Error).name });
  }
  return outcome;
}

/** The event as the row keeps it for a retry: the envelope fields processing reads, in the provider's own shape. */
const payloadOf = (event: ProviderEvent) =>
  JSON.stringify({ id: event.id, type: event.type, created: event.created, data: { object: event.object } });

const record = (event: ProviderEvent, errorMessage: string) =>
  recordFailedWebhookEvent({
    provider: BILLING_PROVIDER,
    providerEventId: event.id,
    eventType: event.type,
    errorMessage,
    payload: payloadOf(event),
  });

/**
 * An administrator's retry of a failed event's row: the event it kept is processed again, exactly as a
 * delivery of it would be (once only, by the same marker), so the row leaves the queue when the event now
 * applies (or turns out a duplicate or out of date), stays with a new `error_message` when it fails for good
 * again, and a failure on our side is a 503 as for a delivery.
 */
export async function retryFailedBillingEvent(row: StoredFailedWebhookEvent, log: RequestLogger): Promise<BillingEventOutcome> {
  const event = row.provider === BILLING_PROVIDER && row.payload !== null ? providerEventOf(JSON.parse(row.payload)) : null;
  if (!event) throw new ApiError(FAILED_WEBHOOK_EVENT_NOT_RETRYABLE, { details: { id: row.id, provider: row.provider } });
  return receiveBillingEvent(event, log);
}

/** A retry cannot help: recorded, and answered 2xx so the provider stops. If even the record fails, a retry can help after all. */
async function failForGood(event: ProviderEvent, errorMessage: string, log: RequestLogger): Promise<BillingEventOutcome> {
  log.warn('billing webhook event failed', { event_id: event.id, event_type: event.type, error: errorMessage });
  let row;
  try {
    row = await record(event, errorMessage);
  } catch (error) {
    log.error('failed webhook event not recorded', { event_id: event.id, error: (error as Error).name });
    throw new ApiError(WEBHOOK_EVENT_NOT_PROCESSED, { details: { event_id: event.id, reason: 'NOT_RECORDED' } });
  }
  return { outcome: 'failed', failed_webhook_event_id: row.id, error_message: row.error_message };
}

/** Failed on our side: recorded for the admins (if the table lets us), and answered 503 so the provider delivers it again. */
async function notProcessed(event: ProviderEvent, error: unknown, log: RequestLogger): Promise<never> {
  const reason = error instanceof ApiError ? error.code : (error as Error)?.name || 'Error';
  const errorMessage = `Not processed (${reason}): the subscription could not be written; the provider delivers the event again.`;
  log.error('billing webhook event not processed', { event_id: event.id, event_type: event.type, error: errorMessage });
  try {
    await record(event, errorMessage);
  } catch (recordError) {
    log.error('failed webhook event not recorded', { event_id: event.id, error: (recordError as Error).name });
  }
  throw new ApiError(WEBHOOK_EVENT_NOT_PROCESSED, { details: { event_id: event.id, reason } });
}

import { randomUUID } from 'node:crypto';
import { epochSeconds } from '../db/keys.ts';
import {
  deleteFailedEvent,
  deleteFailedEventRow,
  type FailedWebhookEvent,
  failedEventById,
  failedEventsQueue,
  type StoredFailedWebhookEvent,
  upsertFailedEvent,
} from './webhook-records.ts';

/**
 * Failed webhook events, for the admin attention queues.
 *
 * The billing provider's webhook (POST /api/v1/webhooks/billing,
 * lib/billing/webhook.ts) records here every signed event it cannot process,
 * provider `stripe`; an unsigned or badly signed delivery never gets here, so
 * no anonymous caller can fill the queue. The Git push and merge-request
 * webhooks the spec mentions for auto-deploy are not built; a receiver of
 * theirs would record through the same writer (docs/attention.md). One record
 * per provider event: a redelivery of an event that fails again updates its
 * error and keeps its first `id` and `created_at`; one that then succeeds
 * clears it.
 *
 * A row keeps the event it failed on (`payload`, the verified event as the
 * provider sent it, when it fits an item), so a platform administrator can
 * retry it once the cause is fixed, or dismiss it: both name the row by its
 * `id` (index gsi1).
 */

/** A failed event stays in the queue this long, then expires by TTL. */
export const FAILED_WEBHOOK_RETENTION_DAYS = 30;
/** The queue shows at most this many, newest first. */
export const FAILED_WEBHOOK_LIMIT = 100;
/** Longest error message kept. */
const ERROR_MESSAGE_MAX = 2000;
/** Largest event kept for a retry: an item holds 400 KB in all. A larger one is recorded without it (not retryable). */
export const FAILED_WEBHOOK_PAYLOAD_MAX_BYTES = 256 * 1024;

export async function recordFailedWebhookEvent(
  input: { provider: string; providerEventId: string; eventType: string; errorMessage: string; payload?: string },
  now = new Date(),
): Promise<FailedWebhookEvent> {
  const kept = input.payload !== undefined && Buffer.byteLength(input.payload) <= FAILED_WEBHOOK_PAYLOAD_MAX_BYTES;
  return upsertFailedEvent({
    provider: input.provider,
    providerEventId: input.providerEventId,
    eventType: input.eventType,
    errorMessage: input.errorMessage.slice(0, ERROR_MESSAGE_MAX),
    payload: kept ? input.payload! : null,
    id: randomUUID(),
    at: now.toISOString(),
    expiresEpoch: epochSeconds(now) + FAILED_WEBHOOK_RETENTION_DAYS * 86_400,
  });
}

/** An event that failed before and has now been processed is no longer for the admins to look at. */
export async function clearFailedWebhookEvent(provider: string, providerEventId: string): Promise<void> {
  await deleteFailedEvent(provider, providerEventId);
}

export async function listFailedWebhookEvents(now = new Date()): Promise<FailedWebhookEvent[]> {
  return failedEventsQueue(epochSeconds(now), FAILED_WEBHOOK_LIMIT);
}

/** The failed event whose row has this `id`, or null (unknown, or expired). */
export async function findFailedWebhookEvent(id: string, now = new Date()): Promise<StoredFailedWebhookEvent | null> {
  return failedEventById(id.toLowerCase(), epochSeconds(now));
}

/**
 * An administrator's dismissal: the row leaves the queue. Conditional on it still being this row, so a
 * dismissal racing a retry that cleared it (or another dismissal) answers false, and nothing else is removed.
 */
export async function dismissFailedWebhookEvent(row: StoredFailedWebhookEvent): Promise<boolean> {
  return deleteFailedEventRow(row);
}

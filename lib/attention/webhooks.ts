import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';

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

export interface FailedWebhookEvent {
  created_at: string;
  error_message: string;
  event_type: string;
  id: string;
  provider_event_id: string;
}

export async function recordFailedWebhookEvent(
  input: { provider: string; providerEventId: string; eventType: string; errorMessage: string; payload?: string },
  now = new Date(),
): Promise<FailedWebhookEvent> {
  const id = randomUUID();
  const at = now.toISOString();
  const kept = input.payload !== undefined && Buffer.byteLength(input.payload) <= FAILED_WEBHOOK_PAYLOAD_MAX_BYTES;
  const payload = kept ? input.payload! : null;
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.failedWebhookEvent(input.provider, input.providerEventId),
      // if_not_exists keeps the first id, created_at, queue position and id key of a redelivered event.
      UpdateExpression:
        'SET #type = :type, provider = :provider, provider_event_id = :eventId, event_type = :eventType, error_message = :error, ' +
        'id = if_not_exists(id, :id), created_at = if_not_exists(created_at, :now), last_failed_at = :now, payload = :payload, ' +
        'gsi1pk = if_not_exists(gsi1pk, :byId), gsi1sk = :byIdSort, gsi2pk = :queue, gsi2sk = if_not_exists(gsi2sk, :sort), #ttl = :ttl',
      ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':payload': payload,
        ':byId': keys.failedWebhookById(id).gsi1pk,
        ':byIdSort': keys.failedWebhookById(id).gsi1sk,
        ':type': 'failed_webhook_event',
        ':provider': input.provider,
        ':eventId': input.providerEventId,
        ':eventType': input.eventType,
        ':error': input.errorMessage.slice(0, ERROR_MESSAGE_MAX),
        ':id': id,
        ':now': at,
        ':queue': keys.failedWebhookQueue('', '').gsi2pk,
        ':sort': keys.failedWebhookQueue(at, id).gsi2sk,
        ':ttl': epochSeconds(now) + FAILED_WEBHOOK_RETENTION_DAYS * 86_400,
      },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const item = reply.Attributes!;
  const byId = keys.failedWebhookById(item.id as string);
  if (item.gsi1pk !== byId.gsi1pk) {
    // A row recorded before rows had their id key, failing again: its key is made from its own first id.
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.failedWebhookEvent(input.provider, input.providerEventId),
        UpdateExpression: 'SET gsi1pk = :byId',
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':byId': byId.gsi1pk, ':id': item.id },
      }),
    );
  }
  return toRow(item);
}

/** An event that failed before and has now been processed is no longer for the admins to look at. */
export async function clearFailedWebhookEvent(provider: string, providerEventId: string): Promise<void> {
  await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.failedWebhookEvent(provider, providerEventId) }));
}

const toRow = (item: Record<string, unknown>): FailedWebhookEvent => ({
  created_at: item.created_at as string,
  error_message: item.error_message as string,
  event_type: item.event_type as string,
  id: item.id as string,
  provider_event_id: item.provider_event_id as string,
});

export async function listFailedWebhookEvents(now = new Date()): Promise<FailedWebhookEvent[]> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :queue',
      // TTL deletion lags; an expired record is not shown.
      FilterExpression: '#ttl > :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':queue': keys.failedWebhookQueue('', '').gsi2pk, ':now': epochSeconds(now) },
      ScanIndexForward: false,
      Limit: FAILED_WEBHOOK_LIMIT,
    }),
  );
  return (reply.Items ?? []).map(toRow);
}

/** A failed event's row as stored, for the admin actions: its provider, event id and the event itself when kept. */
export interface StoredFailedWebhookEvent extends FailedWebhookEvent {
  provider: string;
  /** The verified event it failed on; null when it was too large to keep, or failed before rows kept it. */
  payload: string | null;
}

/** The failed event whose row has this `id`, or null (unknown, or expired). */
export async function findFailedWebhookEvent(id: string, now = new Date()): Promise<StoredFailedWebhookEvent | null> {
  const ref = keys.failedWebhookById(id.toLowerCase());
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': ref.gsi1pk, ':sk': ref.gsi1sk },
    }),
  );
  const listed = reply.Items?.[0];
  if (!listed) return null;
  // The index is read eventually; the row itself, consistently (a retry or dismissal may have just removed it).
  const item = (
    await dynamo().send(
      new GetCommand({
        TableName: config.tableName(),
        Key: keys.failedWebhookEvent(listed.provider as string, listed.provider_event_id as string),
        ConsistentRead: true,
      }),
    )
  ).Item;
  if (!item || item.id !== listed.id || (typeof item.ttl === 'number' && item.ttl <= epochSeconds(now))) return null;
  return { ...toRow(item), provider: item.provider as string, payload: typeof item.payload === 'string' ? item.payload : null };
}

/**
 * An administrator's dismissal: the row leaves the queue. Conditional on it still being this row, so a
 * dismissal racing a retry that cleared it (or another dismissal) answers false, and nothing else is removed.
 */
export async function dismissFailedWebhookEvent(row: StoredFailedWebhookEvent): Promise<boolean> {
  try {
    await dynamo().send(
      new DeleteCommand({
        TableName: config.tableName(),
        Key: keys.failedWebhookEvent(row.provider, row.provider_event_id),
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': row.id },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

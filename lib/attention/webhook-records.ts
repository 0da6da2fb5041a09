import { DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { getItem, type Stored } from '../db/item.ts';
import { keys } from '../db/keys.ts';

/**
 * The records of failed webhook events (lib/attention/webhooks.ts says when they are written): one item
 * per provider event (`FAILEDWEBHOOK#{provider}#{event}`), in the admin queue (gsi2, by first failure)
 * and found by its row `id` (gsi1). It expires by TTL (`ttl`).
 */

/** The spec's failed webhook event row. */
export interface FailedWebhookEvent {
  created_at: string;
  error_message: string;
  event_type: string;
  id: string;
  provider_event_id: string;
}

/** A failed event's row as stored, for the admin actions: its provider, event id and the event itself when kept. */
export interface StoredFailedWebhookEvent extends FailedWebhookEvent {
  provider: string;
  /** The verified event it failed on; null when it was too large to keep, or failed before rows kept it. */
  payload: string | null;
}

export interface FailedEventWrite {
  provider: string;
  providerEventId: string;
  eventType: string;
  errorMessage: string;
  payload: string | null;
  /** The row's id and first failure, kept when the event failed before. */
  id: string;
  at: string;
  expiresEpoch: number;
}

/** A failed event's item, as upsertFailedEvent writes it. */
type FailedWebhookEventItem = Stored<
  FailedWebhookEvent & {
    type: 'failed_webhook_event';
    provider: string;
    last_failed_at: string;
    /** Null, or absent on rows from before payloads were kept. */
    payload?: string | null;
    ttl: number;
  }
>;

const toRow = (item: FailedWebhookEventItem): FailedWebhookEvent => ({
  created_at: item.created_at,
  error_message: item.error_message,
  event_type: item.event_type,
  id: item.id,
  provider_event_id: item.provider_event_id,
});

/** Records a failure of the event: a new row, or the event's row with its latest error (first id, first failure and queue place kept). */
export async function upsertFailedEvent(e: FailedEventWrite): Promise<FailedWebhookEvent> {
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.failedWebhookEvent(e.provider, e.providerEventId),
      // if_not_exists keeps the first id, created_at, queue position and id key of a redelivered event.
      UpdateExpression:
        'SET #type = :type, provider = :provider, provider_event_id = :eventId, event_type = :eventType, error_message = :error, ' +
        'id = if_not_exists(id, :id), created_at = if_not_exists(created_at, :now), last_failed_at = :now, payload = :payload, ' +
        'gsi1pk = if_not_exists(gsi1pk, :byId), gsi1sk = :byIdSort, gsi2pk = :queue, gsi2sk = if_not_exists(gsi2sk, :sort), #ttl = :ttl',
      ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':payload': e.payload,
        ':byId': keys.failedWebhookById(e.id).gsi1pk,
        ':byIdSort': keys.failedWebhookById(e.id).gsi1sk,
        ':type': 'failed_webhook_event',
        ':provider': e.provider,
        ':eventId': e.providerEventId,
        ':eventType': e.eventType,
        ':error': e.errorMessage,
        ':id': e.id,
        ':now': e.at,
        ':queue': keys.failedWebhookQueue('', '').gsi2pk,
        ':sort': keys.failedWebhookQueue(e.at, e.id).gsi2sk,
        ':ttl': e.expiresEpoch,
      },
      ReturnValues: 'ALL_NEW',
    }),
  );
  // ALL_NEW: the whole item, as just written.
  const item = reply.Attributes as FailedWebhookEventItem;
  const byId = keys.failedWebhookById(item.id);
  if (item.gsi1pk !== byId.gsi1pk) {
    // A row recorded before rows had their id key, failing again: its key is made from its own first id.
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.failedWebhookEvent(e.provider, e.providerEventId),
        UpdateExpression: 'SET gsi1pk = :byId',
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':byId': byId.gsi1pk, ':id': item.id },
      }),
    );
  }
  return toRow(item);
}

/** The event's row goes, whichever it is. */
export async function deleteFailedEvent(provider: string, providerEventId: string): Promise<void> {
  await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.failedWebhookEvent(provider, providerEventId) }));
}

/** The queue, newest first, at most `limit` rows, none expired at `nowEpoch`. */
export async function failedEventsQueue(nowEpoch: number, limit: number): Promise<FailedWebhookEvent[]> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :queue',
      // TTL deletion lags; an expired record is not shown.
      FilterExpression: '#ttl > :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':queue': keys.failedWebhookQueue('', '').gsi2pk, ':now': nowEpoch },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return ((reply.Items ?? []) as FailedWebhookEventItem[]).map(toRow);
}

/** The row whose `id` this is, or null (unknown, or expired at `nowEpoch`). */
export async function failedEventById(id: string, nowEpoch: number): Promise<StoredFailedWebhookEvent | null> {
  const ref = keys.failedWebhookById(id);
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': ref.gsi1pk, ':sk': ref.gsi1sk },
    }),
  );
  const listed = reply.Items?.[0] as FailedWebhookEventItem | undefined;
  if (!listed) return null;
  // The index is read eventually; the row itself, consistently (a retry or dismissal may have just removed it).
  const item = await getItem<FailedWebhookEventItem>(keys.failedWebhookEvent(listed.provider, listed.provider_event_id), true);
  if (!item || item.id !== listed.id || (typeof item.ttl === 'number' && item.ttl <= nowEpoch)) return null;
  return { ...toRow(item), provider: item.provider, payload: typeof item.payload === 'string' ? item.payload : null };
}

/** The row goes if it is still this row (same `id`): false when another write removed or replaced it first. */
export async function deleteFailedEventRow(row: StoredFailedWebhookEvent): Promise<boolean> {
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

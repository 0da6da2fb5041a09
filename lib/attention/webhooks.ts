import { randomUUID } from 'node:crypto';
import { DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
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
 */

/** A failed event stays in the queue this long, then expires by TTL. */
export const FAILED_WEBHOOK_RETENTION_DAYS = 30;
/** The queue shows at most this many, newest first. */
export const FAILED_WEBHOOK_LIMIT = 100;
/** Longest error message kept. */
const ERROR_MESSAGE_MAX = 2000;

export interface FailedWebhookEvent {
  created_at: string;
  error_message: string;
  event_type: string;
  id: string;
  provider_event_id: string;
}

export async function recordFailedWebhookEvent(
  input: { provider: string; providerEventId: string; eventType: string; errorMessage: string },
  now = new Date(),
): Promise<FailedWebhookEvent> {
  const id = randomUUID();
  const at = now.toISOString();
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.failedWebhookEvent(input.provider, input.providerEventId),
      // if_not_exists keeps the first id, created_at and queue position of a redelivered event.
      UpdateExpression:
        'SET #type = :type, provider = :provider, provider_event_id = :eventId, event_type = :eventType, error_message = :error, ' +
        'id = if_not_exists(id, :id), created_at = if_not_exists(created_at, :now), last_failed_at = :now, ' +
        'gsi2pk = :queue, gsi2sk = if_not_exists(gsi2sk, :sort), #ttl = :ttl',
      ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
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
  return toRow(reply.Attributes!);
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

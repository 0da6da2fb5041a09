import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import type { TableKey } from '../db/item.ts';

/**
 * The records of billing webhook events: one marker per applied provider event
 * (`PROCESSEDWEBHOOK#{provider}#{event}`), written in the same transaction as the subscription change it
 * applied (lib/attention/team-state.ts, `once`), so an event applies once however often it is delivered.
 * It expires by TTL after `ttl`.
 */

export interface ProcessedEvent {
  provider: string;
  providerEventId: string;
  eventType: string;
  teamId: string;
  processedAt: Date;
  expiresEpoch: number;
}

/** The marker item of an applied event. */
/** The marker of a billing provider's event applied once (it expires by TTL). */
export type ProcessedEventItem = TableKey & {
  type: 'processed_webhook_event';
  provider: string;
  provider_event_id: string;
  event_type: string;
  team_id: string;
  processed_at: string;
  ttl: number;
};

export function processedEventItem(e: ProcessedEvent): ProcessedEventItem {
  return {
    ...keys.processedWebhookEvent(e.provider, e.providerEventId),
    type: 'processed_webhook_event',
    provider: e.provider,
    provider_event_id: e.providerEventId,
    event_type: e.eventType,
    team_id: e.teamId,
    processed_at: e.processedAt.toISOString(),
    ttl: e.expiresEpoch,
  };
}

/** Whether the event was applied (its marker exists), read consistently. */
export async function wasEventProcessed(provider: string, providerEventId: string): Promise<boolean> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.processedWebhookEvent(provider, providerEventId), ConsistentRead: true }),
  );
  return reply.Item !== undefined;
}

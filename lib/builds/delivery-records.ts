import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';

/**
 * Git webhook deliveries, recorded once by the forge's delivery id (GitHub's
 * `X-GitHub-Delivery`, GitLab's `X-Gitlab-Event-UUID`): the first record wins
 * a conditional put, so a redelivery, or two copies racing, is acted on once.
 * Kept 30 days; forges redeliver within days.
 */
const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3600;

export type GitProvider = 'github' | 'gitlab';

/** True when this call recorded the delivery first; false when it was recorded before. */
export async function recordDelivery(input: {
  provider: GitProvider;
  deliveryId: string;
  eventType: string;
  projectIds: string[];
}): Promise<boolean> {
  const now = new Date();
  try {
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: {
          ...keys.gitDelivery(input.provider, input.deliveryId),
          type: 'git_delivery',
          provider: input.provider,
          delivery_id: input.deliveryId,
          event_type: input.eventType,
          project_ids: input.projectIds,
          received_at: now.toISOString(),
          ttl: epochSeconds(now) + DELIVERY_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** Forgets a delivery whose processing failed, so the forge's retry is processed. */
export async function deleteDelivery(provider: GitProvider, deliveryId: string): Promise<void> {
  await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.gitDelivery(provider, deliveryId) }));
}

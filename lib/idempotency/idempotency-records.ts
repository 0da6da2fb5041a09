import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import type { JsonObject } from '../json.ts';

/**
 * The records of Idempotency-Key (lib/idempotency/idempotency.ts): one per (team, SHA-256 of the key),
 * `in_progress` from its claim, `completed` with what a replay rebuilds the answer from.
 */

/** A key's record as stored. */
export interface IdempotencyRecord {
  request_hash: string;
  state: 'in_progress' | 'completed';
  /** What the first request's caller chose to keep for replays (its shape is that caller's: see idempotent). */
  stored?: JsonObject;
}

const recordKey = (teamId: string, keyHash: string) => keys.idempotency(teamId, keyHash);

/**
 * Claims the key for a request: free, or claimed by a request with the same body that died (claimed before
 * `abandonedBefore`). False when another request holds it or completed under it.
 */
export async function claimIdempotencyKey(claim: {
  teamId: string;
  keyHash: string;
  requestHash: string;
  now: Date;
  recordSeconds: number;
  abandonedBefore: Date;
}): Promise<boolean> {
  try {
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: {
          ...recordKey(claim.teamId, claim.keyHash),
          type: 'idempotency',
          team_id: claim.teamId,
          request_hash: claim.requestHash,
          state: 'in_progress',
          created_at: claim.now.toISOString(),
          ttl: epochSeconds(claim.now) + claim.recordSeconds,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR (#state = :progress AND request_hash = :hash AND created_at < :abandoned)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':progress': 'in_progress',
          ':hash': claim.requestHash,
          ':abandoned': claim.abandonedBefore.toISOString(),
        },
      }),
    );
    return true;
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    return false;
  }
}

export async function readIdempotencyKey(teamId: string, keyHash: string): Promise<IdempotencyRecord | null> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: recordKey(teamId, keyHash), ConsistentRead: true }),
  );
  return (reply.Item as IdempotencyRecord | undefined) ?? null;
}

/** Frees a claim whose request created nothing (best effort: the TTL ends it otherwise). */
export async function releaseIdempotencyKey(teamId: string, keyHash: string): Promise<void> {
  await dynamo()
    .send(
      new DeleteCommand({
        TableName: config.tableName(),
        Key: recordKey(teamId, keyHash),
        ConditionExpression: '#state = :progress',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':progress': 'in_progress' },
      }),
    )
    .catch(() => undefined);
}

/** The request succeeded: replays answer from `stored`. */
export async function completeIdempotencyKey(teamId: string, keyHash: string, stored: JsonObject): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: recordKey(teamId, keyHash),
      UpdateExpression: 'SET #state = :done, #stored = :stored',
      ExpressionAttributeNames: { '#state': 'state', '#stored': 'stored' },
      ExpressionAttributeValues: { ':done': 'completed', ':stored': stored },
    }),
  );
}

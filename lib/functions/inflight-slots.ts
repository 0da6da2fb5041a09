import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';

/**
 * In-flight slots: the team item `FNINFLIGHT` holds a map invocation id ->
 * expiry (epoch seconds). Taking a slot is one conditional write (`size(slots)
 * < 10`), releasing one removes its key (idempotent). A slot a dead platform
 * never released expires and is pruned when the cap refuses.
 */

/** 10 queued invocations in flight per team (spec Limits). */
export const MAX_INFLIGHT_PER_TEAM = 10;
/** A slot is pruned this long after it was taken if nothing released it. */
const SLOT_LIFETIME_SECONDS = 15 * 60;

/** Makes the team's in-flight item on its first use (another caller may make it first). */
async function ensureInflightItem(teamId: string): Promise<void> {
  try {
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: { ...keys.functionInflight(teamId), type: 'function_inflight', slots: {} },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
  }
}

async function pruneExpiredSlots(teamId: string, now: number): Promise<number> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.functionInflight(teamId), ConsistentRead: true }),
  );
  let pruned = 0;
  for (const [id, expires] of Object.entries((reply.Item?.slots ?? {}) as Record<string, number>)) {
    if (expires > now) continue;
    try {
      await dynamo().send(
        new UpdateCommand({
          TableName: config.tableName(),
          Key: keys.functionInflight(teamId),
          UpdateExpression: 'REMOVE slots.#id',
          ConditionExpression: 'slots.#id = :expires',
          ExpressionAttributeNames: { '#id': id },
          ExpressionAttributeValues: { ':expires': expires },
        }),
      );
      pruned++;
    } catch (error) {
      if (!isConditionalCheckFailure(error)) throw error;
    }
  }
  return pruned;
}

/** One conditional write: the slot, if the team's item exists and holds fewer than 10. */
async function setSlot(teamId: string, slotId: string, now: Date): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.functionInflight(teamId),
        UpdateExpression: 'SET slots.#id = :expires',
        ConditionExpression: 'attribute_exists(slots) AND size(slots) < :max',
        ExpressionAttributeNames: { '#id': slotId },
        ExpressionAttributeValues: { ':expires': epochSeconds(now) + SLOT_LIFETIME_SECONDS, ':max': MAX_INFLIGHT_PER_TEAM },
      }),
    );
    return true;
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    return false;
  }
}

/** Takes an in-flight slot for `slotId`; false when the team has 10. One write when a slot is free. */
export async function takeInflightSlot(teamId: string, slotId: string, now = new Date()): Promise<boolean> {
  if (await setSlot(teamId, slotId, now)) return true;
  // Refused: the team's first invocation (its item is made now), or the cap (slots a platform that died never
  // released are pruned, then it is tried once more).
  await ensureInflightItem(teamId);
  if (await setSlot(teamId, slotId, now)) return true;
  if ((await pruneExpiredSlots(teamId, epochSeconds(now))) > 0) return setSlot(teamId, slotId, now);
  return false;
}

export async function releaseInflightSlot(teamId: string, slotId: string): Promise<void> {
  await dynamo()
    .send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.functionInflight(teamId),
        UpdateExpression: 'REMOVE slots.#id',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#id': slotId },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalCheckFailure(error)) throw error;
    });
}

import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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

/** Removes the slots of `slots` (the item as read) that expired by `now`, each only if still that slot; how many went. */
async function pruneExpiredSlots(teamId: string, slots: Record<string, number>, now: number): Promise<number> {
  let pruned = 0;
  for (const [id, expires] of Object.entries(slots)) {
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

/**
 * One conditional write: the slot, if the team's item exists and holds fewer than 10. Refused, it answers
 * the item as it was (`slots`), or null when there is none: no read of its own.
 */
async function setSlot(
  teamId: string,
  slotId: string,
  now: Date,
): Promise<{ taken: true } | { taken: false; slots: Record<string, number> | null }> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.functionInflight(teamId),
        UpdateExpression: 'SET slots.#id = :expires',
        ConditionExpression: 'attribute_exists(slots) AND size(slots) < :max',
        ExpressionAttributeNames: { '#id': slotId },
        ExpressionAttributeValues: { ':expires': epochSeconds(now) + SLOT_LIFETIME_SECONDS, ':max': MAX_INFLIGHT_PER_TEAM },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { taken: true };
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    // The item comes as DynamoDB's attribute values (the document client leaves errors as they are).
    const item = (error as { Item?: { slots?: { M?: Record<string, { N?: string }> } } }).Item;
    if (!item) return { taken: false, slots: null };
    return { taken: false, slots: Object.fromEntries(Object.entries(item.slots?.M ?? {}).map(([id, value]) => [id, Number(value.N)])) };
  }
}

/** Takes an in-flight slot for `slotId`; false when the team has 10. One write when a slot is free, and when the cap refuses. */
export async function takeInflightSlot(teamId: string, slotId: string, now = new Date()): Promise<boolean> {
  let attempt = await setSlot(teamId, slotId, now);
  if (attempt.taken) return true;
  if (attempt.slots === null) {
    // The team's first invocation: its item is made now (another caller may make it first), then tried once more.
    await ensureInflightItem(teamId);
    attempt = await setSlot(teamId, slotId, now);
    if (attempt.taken || attempt.slots === null) return attempt.taken;
  }
  // The cap: slots a platform that died never released are pruned, then it is tried once more.
  if ((await pruneExpiredSlots(teamId, attempt.slots, epochSeconds(now))) === 0) return false;
  return (await setSlot(teamId, slotId, now)).taken;
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

import { PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { epochSeconds } from './keys.ts';
import { isConditionalCheckFailure } from './errors.ts';
import type { Write } from './transact.ts';

/**
 * A lease list: one item whose `slots` map holds lease id -> expiry (epoch seconds), for a cap on things in
 * progress. Taking a lease is one conditional write (`size(slots) < cap`), releasing one removes its key
 * (idempotent). A lease nothing released (its holder died or was frozen) expires and is pruned by the next
 * taker the cap refuses. Users: the queued door's in-flight slots per team (lib/functions/inflight-slot-records.ts)
 * and the HTTPS door's request slots per function in the cloud (lib/functions/request-slot-records.ts).
 */
export interface LeaseList {
  key: { pk: string; sk: string };
  /** The item's `type`. */
  type: string;
  cap: number;
  /** A lease is pruned this long after it was taken if nothing released it. */
  lifetimeSeconds: number;
}

/** Makes the list's item on its first use (another caller may make it first). */
async function ensureListItem(list: LeaseList): Promise<void> {
  try {
    await dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: { ...list.key, type: list.type, slots: {} },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
  }
}

/** Removes the leases of `slots` (the item as read) that expired by `now`, each only if still that lease; how many went. */
async function pruneExpiredLeases(list: LeaseList, slots: Record<string, number>, now: number): Promise<number> {
  let pruned = 0;
  for (const [id, expires] of Object.entries(slots)) {
    if (expires > now) continue;
    try {
      await dynamo().send(
        new UpdateCommand({
          TableName: config.tableName(),
          Key: list.key,
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
 * One conditional write: the lease, if the list's item exists and holds fewer than its cap. Refused, it answers
 * the item as it was (`slots`), or null when there is none: no read of its own.
 */
async function setLease(
  list: LeaseList,
  leaseId: string,
  now: Date,
): Promise<{ taken: true } | { taken: false; slots: Record<string, number> | null }> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: list.key,
        UpdateExpression: 'SET slots.#id = :expires',
        ConditionExpression: 'attribute_exists(slots) AND size(slots) < :max',
        ExpressionAttributeNames: { '#id': leaseId },
        ExpressionAttributeValues: { ':expires': epochSeconds(now) + list.lifetimeSeconds, ':max': list.cap },
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

/** Takes a lease for `leaseId`; false when the list holds its cap. One write when a lease is free, and when the cap refuses. */
export async function takeLease(list: LeaseList, leaseId: string, now = new Date()): Promise<boolean> {
  let attempt = await setLease(list, leaseId, now);
  if (attempt.taken) return true;
  if (attempt.slots === null) {
    // The list's first lease: its item is made now (another caller may make it first), then tried once more.
    await ensureListItem(list);
    attempt = await setLease(list, leaseId, now);
    if (attempt.taken || attempt.slots === null) return attempt.taken;
  }
  // The cap: leases a holder that died never released are pruned, then it is tried once more.
  if ((await pruneExpiredLeases(list, attempt.slots, epochSeconds(now))) === 0) return false;
  return (await setLease(list, leaseId, now)).taken;
}

/**
 * The release of a lease as a write of a transaction (lib/db/transact.ts): only on the list's item as it exists,
 * since an update of a missing item would make one without its `slots`, which no later take could fill.
 */
export function releaseLeaseWrite(list: LeaseList, leaseId: string): Write {
  return {
    Update: {
      Key: list.key,
      UpdateExpression: 'REMOVE slots.#id',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#id': leaseId },
    },
  };
}

export async function releaseLease(list: LeaseList, leaseId: string): Promise<void> {
  await dynamo()
    .send(
      new UpdateCommand({
        TableName: config.tableName(),
        ...(releaseLeaseWrite(list, leaseId) as { Update: Omit<UpdateCommandInput, 'TableName'> }).Update,
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionalCheckFailure(error)) throw error;
    });
}

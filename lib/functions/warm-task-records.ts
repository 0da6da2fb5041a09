import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';

/**
 * The warm pool's slots (`FNWARMPOOL` / `SLOT#{n}`, docs/functions.md "The warm pool"): each slot names at most one
 * blank runner task. A filler claims a slot with a conditional put before it starts a task, so racing fillers start
 * one task per slot and the pool never grows past its size; a worker takes a task by deleting its slot on the
 * condition that it still names that task, so two workers never hand one task two invocations.
 */

export interface WarmSlot {
  slot: number;
  /** Names this filling of the slot; its assignment object is keyed by it. */
  warm_id: string;
  /** Absent while RunTask is under way. */
  task_arn?: string;
  /** The task definition the task runs: after a deploy, a task of the old one is not taken. */
  task_definition: string;
  /** Epoch milliseconds: the task stops waiting for an assignment then, and exits. */
  ready_until: number;
  /** Epoch milliseconds of the claim: a filling with no task long after it (its filler died) may be claimed again. */
  claimed_at: number;
}

/** A slot claimed this long ago with no task recorded lost its filler. */
const STALE_CLAIM_MS = 5 * 60_000;

const table = () => config.tableName();

const itemOf = (slot: WarmSlot) => ({
  ...keys.functionWarmSlot(slot.slot),
  type: 'function_warm_slot',
  ...slot,
  // Readers check ready_until themselves; the TTL only clears slots of a pool that was made smaller.
  ttl: epochSeconds(new Date(slot.ready_until)) + 3600,
});

/**
 * Claims the slot for a new task when it is empty, when its task is of another task definition, or when its task's
 * wait ends within `renewBeforeMs` (the old task is left to end its wait alone). False when another filler holds it.
 */
export async function claimWarmSlot(slot: WarmSlot, now: number, renewBeforeMs: number): Promise<boolean> {
  try {
    await dynamo().send(
      new PutCommand({
        TableName: table(),
        Item: itemOf(slot),
        ConditionExpression:
          'attribute_not_exists(pk) OR ready_until < :renew OR task_definition <> :definition OR ' +
          '(attribute_not_exists(task_arn) AND claimed_at < :stale)',
        ExpressionAttributeValues: { ':renew': now + renewBeforeMs, ':definition': slot.task_definition, ':stale': now - STALE_CLAIM_MS },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** Records the started task in the slot this filling claimed; false when the slot was claimed again meanwhile. */
export async function markWarmSlotStarted(slot: number, warmId: string, taskArn: string): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: table(),
        Key: keys.functionWarmSlot(slot),
        UpdateExpression: 'SET task_arn = :arn',
        ConditionExpression: 'warm_id = :id',
        ExpressionAttributeValues: { ':arn': taskArn, ':id': warmId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/**
 * Empties the slot if it still names this filling: a task that could not be started, or one that stopped. With
 * `condition` it is a take: only while the slot names a started task of that definition whose wait ends after
 * `takenBefore` (a slot still starting has no task to hand over). True for the caller whose delete removed it: that
 * caller alone owns the task.
 */
export async function releaseWarmSlot(
  slot: number,
  warmId: string,
  condition?: { takenBefore: number; taskDefinition: string },
): Promise<boolean> {
  try {
    await dynamo().send(
      new DeleteCommand({
        TableName: table(),
        Key: keys.functionWarmSlot(slot),
        ConditionExpression: condition
          ? 'warm_id = :id AND attribute_exists(task_arn) AND ready_until > :until AND task_definition = :definition'
          : 'warm_id = :id',
        ExpressionAttributeValues: condition
          ? { ':id': warmId, ':until': condition.takenBefore, ':definition': condition.taskDefinition }
          : { ':id': warmId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** Every slot of the pool as the table has it now (one partition, a handful of items). */
export async function listWarmSlots(): Promise<WarmSlot[]> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.functionWarmSlot(0).pk },
      ConsistentRead: true,
    }),
  );
  return (reply.Items ?? []).map((item) => ({
    slot: Number(item.slot),
    warm_id: String(item.warm_id),
    ...(item.task_arn ? { task_arn: String(item.task_arn) } : {}),
    task_definition: String(item.task_definition),
    ready_until: Number(item.ready_until),
    claimed_at: Number(item.claimed_at),
  }));
}

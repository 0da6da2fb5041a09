import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { setFields } from '../db/set-fields.ts';
import type { Write } from '../db/transact.ts';
import { logger } from '../logger.ts';
import { type ExpressionValues, getItem } from '../db/item.ts';

/**
 * The records of queued invocations: one table item `INVOCATION#{id}` per invocation, listed per function
 * (gsi1, newest last) and, while pending or running, in one of the OPEN_INVOCATION_SHARDS partitions of the
 * open index (gsi2) that a restarted platform reclaims. It expires by TTL after the retention; reads treat
 * a record whose TTL has passed as gone (DynamoDB deletes expired items lazily). Every state change is a
 * conditional write from the state it was read in (invocations.ts has the states).
 */

export type InvocationStatus = 'pending' | 'running' | 'completed' | 'failed' | 'timed_out';

/**
 * What started an invocation: the public queued door's POST, a tick of the function's schedule, or a team admin's
 * run now. An HTTPS call is never recorded, so never a trigger.
 */
export type InvocationTrigger = 'queued' | 'schedule' | 'manual';

/**
 * The open invocations' index (gsi2) is write-sharded over this many partitions, by the invocation id: every
 * invocation writes its key there twice (made pending, then removed when it ends), and one partition of an
 * index takes about 1,000 writes a second, so 16 hold about 8,000 invocations a second. The reclaim reads all
 * of them at once.
 */
export const OPEN_INVOCATION_SHARDS = 16;

/** The shard of an invocation: its id is random (UUID v4), so its first 32 bits spread evenly. */
export const openInvocationShard = (id: string) => Number.parseInt(id.slice(0, 8), 16) % OPEN_INVOCATION_SHARDS;

export interface InvocationRecord {
  id: string;
  status: InvocationStatus;
  team_id: string;
  project_id: string;
  function_id: string;
  function_name: string;
  /** The live deployment when it was invoked (the run uses the live one at run time). */
  deployment_id: string;
  /** Absent on records made before triggers were: those were all `queued`. */
  trigger?: InvocationTrigger;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** ISO time the record and its objects are gone. */
  expires_at: string;
  ttl: number;
  error_message?: string;
  response_status?: number;
  runtime_ms?: number;
  /** The request, result and console output as JSON text, each when small (invocation-payloads.ts). */
  request_json?: string;
  result_json?: string;
  console_json?: string;
  /** The caller's `X-Callback-Url` (lib/functions/callbacks.ts) and how its delivery went; team members only. */
  callback_url?: string;
  callback_attempts?: number;
  /** The HTTP status of the last attempt; null when it got none (refused, unreachable, timed out). */
  callback_last_status?: number | null;
  /** Why the last attempt got no 2xx, in a sentence; null after a 2xx. */
  callback_last_error?: string | null;
  callback_delivered_at?: string | null;
}

export const isExpired = (item: { ttl?: unknown }, now = Date.now()) => typeof item.ttl === 'number' && item.ttl * 1000 <= now;

/** One invocation, or null when unknown or past its retention. */
export async function getInvocation(id: string): Promise<InvocationRecord | null> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return null;
  const item = await getItem<InvocationRecord & { type: string }>(keys.invocation(id), true);
  if (!item || item.type !== 'invocation' || isExpired(item)) return null;
  return item;
}

/** A new pending invocation's record (its request inline when small); refused if the id exists. */
export async function putInvocation(record: InvocationRecord): Promise<void> {
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        ...keys.invocation(record.id),
        ...keys.invocationByFunction(record.project_id, record.function_name, record.created_at, record.id),
        ...keys.openInvocation(openInvocationShard(record.id), record.created_at, record.id),
        type: 'invocation',
        ...record,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export async function deleteInvocation(id: string): Promise<void> {
  await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.invocation(id) }));
}

/**
 * pending -> running, only from pending: the claimed record, or null when a
 * redelivered message, a second consumer or a reclaim got there first (or the
 * invocation is unknown or past its retention), and the caller runs nothing.
 */
export async function claimInvocation(id: string, now = new Date()): Promise<InvocationRecord | null> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return null;
  try {
    // The claim reads the record too (one call where a read and a write were): a worker's first step.
    const reply = await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.invocation(id),
        UpdateExpression: 'SET #status = :running, started_at = :now',
        // Past its retention it is gone, whatever DynamoDB's lazy TTL deletion still holds.
        ConditionExpression: '#status = :pending AND #ttl > :epoch',
        ExpressionAttributeNames: { '#status': 'status', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':running': 'running', ':pending': 'pending', ':now': now.toISOString(), ':epoch': epochSeconds(now) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const record = reply.Attributes as unknown as InvocationRecord;
    // The operator's trail of queued work (docs/operations.md: the dashboard and the function-invocations query).
    logger.info('invocation started', invocationLogFields(record));
    return record;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return null;
    throw error;
  }
}

/** What the lines of an invocation's start and end carry: enough to find one function's invocations, or one team's. */
function invocationLogFields(record: InvocationRecord) {
  const { id, status, team_id, project_id, function_name } = record;
  return { invocation_id: id, status, team_id, project_id, function_name };
}

/** How an invocation ended, as its record keeps it. */
export interface InvocationEnd {
  status: 'completed' | 'failed' | 'timed_out';
  finished_at: string;
  response_status: number;
  error_message?: string;
  runtime_ms?: number;
  result_json?: string;
  console_json?: string;
}

/** The write of `from` -> terminal, out of the open index (for writeInvocationEnd, or a transaction). */
export function invocationEndWrite(id: string, from: 'running' | 'pending', end: InvocationEnd): Write {
  const names: Record<string, string> = { '#status': 'status' };
  const values: ExpressionValues = { ':from': from };
  const sets = setFields({ ...end }, names, values);
  return {
    Update: {
      Key: keys.invocation(id),
      UpdateExpression: `SET ${sets.join(', ')} REMOVE gsi2pk, gsi2sk`,
      ConditionExpression: '#status = :from',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/** `from` -> terminal, and out of the open index; false when the record is not in `from` (or is gone). */
export async function writeInvocationEnd(record: InvocationRecord, from: 'running' | 'pending', end: InvocationEnd): Promise<boolean> {
  try {
    const { Update } = invocationEndWrite(record.id, from, end) as { Update: Omit<UpdateCommandInput, 'TableName'> };
    await dynamo().send(new UpdateCommand({ TableName: config.tableName(), ...Update }));
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
  logInvocationEnd(record, end);
  return true;
}

/** The operator's line of an invocation's end (the start's is claimInvocation's). */
export function logInvocationEnd(record: InvocationRecord, end: InvocationEnd): void {
  logger.info('invocation ended', { ...invocationLogFields({ ...record, status: end.status }), runtime_ms: end.runtime_ms });
}

/** A function's newest invocations (at most `limit`), newest first, expired ones left out. */
export async function recentInvocations(projectId: string, name: string, limit: number): Promise<InvocationRecord[]> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.invocationByFunction(projectId, name, '', '').gsi1pk },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  const now = Date.now();
  return ((reply.Items ?? []) as InvocationRecord[]).filter((item) => !isExpired(item, now));
}

/** Every invocation of a function (expired ones too), as much as deleting them needs. */
export async function functionInvocationStubs(
  projectId: string,
  name: string,
): Promise<Pick<InvocationRecord, 'id' | 'team_id' | 'status'>[]> {
  return (await queryAll({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.invocationByFunction(projectId, name, '', '').gsi1pk },
    ExpressionAttributeNames: { '#status': 'status' },
    ProjectionExpression: 'id, team_id, #status',
  })) as unknown as Pick<InvocationRecord, 'id' | 'team_id' | 'status'>[];
}

export async function deleteInvocations(ids: string[]): Promise<void> {
  await batchWriteAll(ids.map((id) => ({ DeleteRequest: { Key: keys.invocation(id) } })));
}

/** How one callback attempt went, as the record keeps it. */
export interface CallbackAttempt {
  attempt: number;
  status: number | null;
  error: string | null;
  deliveredAt: string | null;
}

/**
 * Records callback attempt `attempt` unless this or a later attempt is already recorded, or a delivery is (a
 * redelivered message): false then, and the caller schedules nothing more.
 */
export async function recordCallbackAttempt(id: string, outcome: CallbackAttempt): Promise<boolean> {
  const sets = ['callback_attempts = :attempt', 'callback_last_status = :status', 'callback_last_error = :error'];
  const values: ExpressionValues = { ':attempt': outcome.attempt, ':status': outcome.status, ':error': outcome.error };
  if (outcome.deliveredAt) {
    sets.push('callback_delivered_at = :delivered');
    values[':delivered'] = outcome.deliveredAt;
  }
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.invocation(id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(callback_delivered_at) AND ' +
          '(attribute_not_exists(callback_attempts) OR callback_attempts < :attempt)',
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

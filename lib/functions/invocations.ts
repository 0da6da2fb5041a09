import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { deleteKeys } from '../aws/s3-lite.ts';
import { batchWriteAll } from '../db/batch.ts';
import { queryAll } from '../db/query.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import type { ConsoleLine, QueuedRequest } from './host.ts';
import { releaseInflightSlot } from './inflight-slots.ts';
import { loadPart, objectKey, partJson, storeObject, storePart, type StoredRequest, type StoredResult } from './invocation-payloads.ts';
import type { DeployedFunction } from './model.ts';

/**
 * Queued invocations (spec: "Invocation (queued door)" and its state table).
 *
 * The record is one table item `INVOCATION#{id}`, expiring by TTL after the
 * retention (7 days). The request, the result and the console output are in
 * the record when small, else objects in the bundles bucket expired by a
 * lifecycle rule after the same 7 days (invocation-payloads.ts). A deleted project's invocations
 * and their objects are deleted with it (deleteProjectInvocations). Reads treat a record whose TTL
 * has passed as gone (DynamoDB deletes expired items lazily).
 *
 * States: pending -> running (the worker's conditional claim) -> completed,
 * failed or timed_out (a conditional write from running). While pending or
 * running the record is in one of the OPEN_INVOCATION_SHARDS index partitions
 * `OPENINVOCATIONS#{shard}`, which a restarted platform reclaims.
 */

export type InvocationStatus = 'pending' | 'running' | 'completed' | 'failed' | 'timed_out';

export const TERMINAL: readonly InvocationStatus[] = ['completed', 'failed', 'timed_out'];

/** The spec's fixed `error_message` sentences, exactly. */
export const INVOCATION_ERRORS = {
  timedOut: 'The function did not finish within its timeout of 60s.',
  outOfMemory: 'The function ran out of memory.',
  handlerError: 'The function returned an error. Check the invocation logs.',
  invalidResponse: 'The function did not return a valid response.',
  notDeployed: 'This function is not deployed. Redeploy the project and try again.',
  couldNotRun: 'The function could not be run. This is a platform issue; please retry.',
  reclaimedRunning: 'The function did not finish before its timeout.',
  reclaimedPending: 'The function was never started. This is a platform issue; please retry.',
} as const;

/** The queued request body is cut here (spec Limits: 1 MB, cut rather than refused today). */
export const MAX_QUEUED_BODY_BYTES = 1024 * 1024;
/** Console output kept per invocation; beyond it lines are dropped and a last line says so. */
export const MAX_CONSOLE_LINES = 1000;
export const MAX_CONSOLE_BYTES = 256 * 1024;

/**
 * The open invocations' index (gsi2) is write-sharded over this many partitions, by the invocation id: every
 * invocation writes its key there twice (made pending, then removed when it ends), and one partition of an
 * index takes about 1,000 writes a second, so 16 hold about 8,000 invocations a second. The reclaim reads all
 * of them at once.
 */
export const OPEN_INVOCATION_SHARDS = 16;

/** The shard of an invocation: its id is random (UUID v4), so its first 32 bits spread evenly. */
export const openInvocationShard = (id: string) => Number.parseInt(id.slice(0, 8), 16) % OPEN_INVOCATION_SHARDS;

/** Request, result and console output are kept 7 days; FUNCTIONS_INVOCATION_RETENTION_MS shortens it for tests. */
export function invocationRetentionMs(): number {
  const value = Number(process.env.FUNCTIONS_INVOCATION_RETENTION_MS);
  return Number.isFinite(value) && value > 0 ? value : 7 * 86_400_000;
}

export interface InvocationRecord {
  id: string;
  status: InvocationStatus;
  team_id: string;
  project_id: string;
  function_id: string;
  function_name: string;
  /** The live deployment when it was invoked (the run uses the live one at run time). */
  deployment_id: string;
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
}

export const isExpired = (item: Record<string, unknown>, now = Date.now()) => typeof item.ttl === 'number' && item.ttl * 1000 <= now;

/** One invocation, or null when unknown or past its retention. */
export async function getInvocation(id: string): Promise<InvocationRecord | null> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return null;
  const reply = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.invocation(id), ConsistentRead: true }));
  if (!reply.Item || reply.Item.type !== 'invocation' || isExpired(reply.Item)) return null;
  return reply.Item as unknown as InvocationRecord;
}

/**
 * Records a new pending invocation: the request (in the record, or its object
 * beside it), then the queue message (the worker claims by id). When the
 * message cannot be sent the record is removed again and the error thrown.
 */
export async function createInvocation(
  fn: DeployedFunction,
  request: QueuedRequest,
  id: string = randomUUID(),
  now = new Date(),
): Promise<InvocationRecord> {
  const createdAt = now.toISOString();
  const expires = new Date(now.getTime() + invocationRetentionMs());
  const record: InvocationRecord = {
    id,
    status: 'pending',
    team_id: fn.team_id,
    project_id: fn.project_id,
    function_id: fn.function_id,
    function_name: fn.name,
    deployment_id: fn.deployment_id,
    created_at: createdAt,
    started_at: null,
    finished_at: null,
    expires_at: expires.toISOString(),
    ttl: epochSeconds(expires),
  };
  const stored: StoredRequest = {
    method: request.method,
    query: request.query,
    headers: request.headers,
    body: request.body.toString('base64'),
  };
  // The request and the record together: the worker reads the request only once the message it gets below
  // has let it claim the record.
  const requestPart = partJson(stored);
  const storing = requestPart.inline ? Promise.resolve() : storeObject(record, 'request', requestPart.json);
  storing.catch(() => undefined);
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        ...keys.invocation(id),
        ...keys.invocationByFunction(fn.project_id, fn.name, createdAt, id),
        ...keys.openInvocation(openInvocationShard(id), createdAt, id),
        type: 'invocation',
        ...record,
        ...(requestPart.inline ? { request_json: requestPart.json } : {}),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  try {
    await storing;
    await sendInvocationMessage(id);
  } catch (error) {
    await dynamo().send(new DeleteCommand({ TableName: config.tableName(), Key: keys.invocation(id) }));
    throw error;
  }
  return record;
}

/** The stored request of an invocation (null when gone). */
export async function loadInvocationRequest(record: InvocationRecord): Promise<QueuedRequest | null> {
  const stored = await loadPart<StoredRequest>(record, 'request');
  if (!stored) return null;
  return {
    method: stored.method,
    query: stored.query,
    headers: stored.headers,
    body: Buffer.from(stored.body, 'base64'),
    invocation: { id: record.id, team_id: record.team_id, requestStored: record.request_json === undefined },
  };
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
    return reply.Attributes as unknown as InvocationRecord;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return null;
    throw error;
  }
}

export interface Finish {
  status: 'completed' | 'failed' | 'timed_out';
  error_message?: string;
  result: StoredResult;
  console: ConsoleLine[];
  runtimeMs?: number;
}

/** Several values of one header (several Set-Cookie) joined into one, as the spec says of queued calls. */
export function joinHeaders(pairs: [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    out[lower] = out[lower] === undefined ? value : `${out[lower]}, ${value}`;
  }
  return out;
}

/** Bounds the console output kept: at most MAX_CONSOLE_LINES lines and MAX_CONSOLE_BYTES bytes. */
export function boundConsole(lines: ConsoleLine[]): ConsoleLine[] {
  const out: ConsoleLine[] = [];
  let bytes = 0;
  for (const line of lines) {
    bytes += Buffer.byteLength(line.line) + 32;
    if (out.length >= MAX_CONSOLE_LINES || bytes > MAX_CONSOLE_BYTES) {
      out.push({ at: line.at, stream: 'stderr', line: `[platform] ${lines.length - out.length} more console lines were not kept` });
      break;
    }
    out.push(line);
  }
  return out;
}

/**
 * running (or, for a reclaim, pending) -> terminal: the result and console
 * objects first, then the record, only from the state it was read in. Returns
 * false when another writer finished it first.
 */
export async function finishInvocation(
  record: InvocationRecord,
  finish: Finish,
  from: 'running' | 'pending' = 'running',
  now = new Date(),
): Promise<boolean> {
  const [resultJson, consoleJson] = await Promise.all([
    storePart(record, 'result', finish.result),
    storePart(record, 'console', boundConsole(finish.console)),
  ]);
  const values: Record<string, unknown> = {
    ':status': finish.status,
    ':from': from,
    ':now': now.toISOString(),
    ':response_status': finish.result.status,
  };
  const set = ['#status = :status', 'finished_at = :now', 'response_status = :response_status'];
  for (const [attribute, json] of [
    ['result_json', resultJson],
    ['console_json', consoleJson],
  ] as const) {
    if (json === null) continue;
    set.push(`${attribute} = :${attribute}`);
    values[`:${attribute}`] = json;
  }
  if (finish.error_message) {
    set.push('error_message = :error_message');
    values[':error_message'] = finish.error_message;
  }
  if (finish.runtimeMs !== undefined) {
    set.push('runtime_ms = :runtime_ms');
    values[':runtime_ms'] = Math.round(finish.runtimeMs);
  }
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.invocation(record.id),
        UpdateExpression: `SET ${set.join(', ')} REMOVE gsi2pk, gsi2sk`,
        ConditionExpression: '#status = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    // Its project was deleted while it ran (the record went with it): what this just stored goes too.
    if (!(await getInvocation(record.id))) {
      await deleteKeys(config.bucket('bundles'), [objectKey(record, 'result'), objectKey(record, 'console')]);
    }
    return false;
  }
  await releaseInflightSlot(record.team_id, record.id);
  return true;
}

const PARTS = ['request', 'result', 'console'] as const;
/** S3 deletes at most this many keys in one request. */
const DELETE_KEYS_MAX = 1000;

/**
 * Deletes a project's invocations with it (they do not wait for their TTL): for each of its function names,
 * the stored request, result and console output objects, then the records; the in-flight slots of those
 * still open are released. Safe to run again. Returns how many records it deleted.
 */
export async function deleteProjectInvocations(projectId: string, functionNames: Iterable<string>): Promise<number> {
  const bucket = config.bucket('bundles');
  let deleted = 0;
  for (const name of new Set(functionNames)) {
    const items = (await queryAll({
      TableName: config.tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.invocationByFunction(projectId, name, '', '').gsi1pk },
      ExpressionAttributeNames: { '#status': 'status' },
      ProjectionExpression: 'id, team_id, #status',
    })) as unknown as Pick<InvocationRecord, 'id' | 'team_id' | 'status'>[];
    const objects = items.flatMap((item) => PARTS.map((part) => objectKey(item, part)));
    for (let i = 0; i < objects.length; i += DELETE_KEYS_MAX) await deleteKeys(bucket, objects.slice(i, i + DELETE_KEYS_MAX));
    await batchWriteAll(items.map((item) => ({ DeleteRequest: { Key: keys.invocation(item.id) } })));
    await Promise.all(items.filter((item) => !TERMINAL.includes(item.status)).map((item) => releaseInflightSlot(item.team_id, item.id)));
    deleted += items.length;
  }
  return deleted;
}

export function sendInvocationMessage(id: string) {
  const message = { QueueUrl: config.queueUrl('invocations'), MessageBody: JSON.stringify({ invocation_id: id }) };
  return sqs().send(new SendMessageCommand(message));
}

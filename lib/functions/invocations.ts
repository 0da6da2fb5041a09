import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { deleteKeys, getObject, putObject } from '../aws/s3-lite.ts';
import { batchWriteAll } from '../db/batch.ts';
import { queryAll } from '../db/query.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import type { ConsoleLine, QueuedRequest } from './host.ts';
import type { DeployedFunction } from './model.ts';

/**
 * Queued invocations (spec: "Invocation (queued door)" and its state table).
 *
 * The record is one table item `INVOCATION#{id}`, expiring by TTL after the
 * retention (7 days). The request, the result and the console output are
 * objects in the bundles bucket under `invocations/{team_id}/{id}/`, expired
 * by a lifecycle rule after the same 7 days. A deleted project's invocations
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
}

export interface StoredResult {
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

const objectKey = (record: Pick<InvocationRecord, 'team_id' | 'id'>, part: 'request' | 'result' | 'console') =>
  `invocations/${record.team_id}/${record.id}/${part}.json`;

const isExpired = (item: Record<string, unknown>, now = Date.now()) => typeof item.ttl === 'number' && item.ttl * 1000 <= now;

/** One invocation, or null when unknown or past its retention. */
export async function getInvocation(id: string): Promise<InvocationRecord | null> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return null;
  const reply = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.invocation(id), ConsistentRead: true }));
  if (!reply.Item || reply.Item.type !== 'invocation' || isExpired(reply.Item)) return null;
  return reply.Item as unknown as InvocationRecord;
}

async function putJson(key: string, value: unknown): Promise<void> {
  await putObject({ bucket: config.bucket('bundles'), key, body: JSON.stringify(value), contentType: 'application/json' });
}

async function getJson<T>(key: string): Promise<T | null> {
  try {
    return JSON.parse(await (await getObject(config.bucket('bundles'), key)).transformToString()) as T;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'NoSuchKey' || name === 'NotFound') return null;
    throw error;
  }
}

interface StoredRequest {
  method: string;
  query: string;
  headers: [string, string][];
  body: string;
}

/**
 * Records a new pending invocation: the request object first, then the
 * record, then the queue message (the worker claims by id). When the message
 * cannot be sent the record is removed again and the error thrown.
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
  // The request object and the record together: the worker reads the request only once the message it gets
  // below has let it claim the record.
  const storing = putJson(objectKey(record, 'request'), stored);
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
  const stored = await getJson<StoredRequest>(objectKey(record, 'request'));
  if (!stored) return null;
  return {
    method: stored.method,
    query: stored.query,
    headers: stored.headers,
    body: Buffer.from(stored.body, 'base64'),
    invocation: { id: record.id, team_id: record.team_id },
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
  await Promise.all([
    putJson(objectKey(record, 'result'), finish.result),
    putJson(objectKey(record, 'console'), boundConsole(finish.console)),
  ]);
  const values: Record<string, unknown> = {
    ':status': finish.status,
    ':from': from,
    ':now': now.toISOString(),
    ':response_status': finish.result.status,
  };
  const set = ['#status = :status', 'finished_at = :now', 'response_status = :response_status'];
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

/** The public poll view (spec "Invocation"): no console output, ever. */
export async function invocationView(record: InvocationRecord): Promise<Record<string, unknown>> {
  const view: Record<string, unknown> = {
    id: record.id,
    status: record.status,
    started_at: record.started_at ?? null,
    finished_at: record.finished_at ?? null,
  };
  if (TERMINAL.includes(record.status)) {
    const result = (await getJson<StoredResult>(objectKey(record, 'result'))) ?? {
      status: record.response_status ?? 500,
      headers: {},
      body: '',
    };
    view.response_status = result.status;
    view.response_headers = result.headers;
    view.response_body = result.body;
    if (record.error_message) view.error_message = record.error_message;
  }
  return view;
}

/** The members' view: the invocation, its function and times, and its console output. */
export async function memberInvocationView(record: InvocationRecord): Promise<Record<string, unknown>> {
  const console = TERMINAL.includes(record.status) ? ((await getJson<ConsoleLine[]>(objectKey(record, 'console'))) ?? []) : [];
  return {
    ...(await invocationView(record)),
    function_name: record.function_name,
    created_at: record.created_at,
    expires_at: record.expires_at,
    console,
  };
}

/** A function's invocations, newest first (at most `limit`), without result bodies. */
export async function listInvocations(projectId: string, name: string, limit = 50): Promise<Record<string, unknown>[]> {
  const prefix = keys.invocationByFunction(projectId, name, '', '');
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': prefix.gsi1pk },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  const now = Date.now();
  return (reply.Items ?? [])
    .filter((item) => !isExpired(item, now))
    .map((item) => ({
      id: item.id,
      status: item.status,
      created_at: item.created_at,
      started_at: item.started_at ?? null,
      finished_at: item.finished_at ?? null,
      ...(item.response_status !== undefined && TERMINAL.includes(item.status) ? { response_status: item.response_status } : {}),
      ...(item.error_message ? { error_message: item.error_message } : {}),
    }));
}

/** Invocations still pending or running (what a restarted platform reclaims): every shard, and the partition of before sharding. */
export async function listOpenInvocations(): Promise<InvocationRecord[]> {
  const shards = Array.from({ length: OPEN_INVOCATION_SHARDS }, (_, shard) => keys.openInvocation(shard, '', '').gsi2pk);
  const partitions = [...shards, keys.openInvocationsUnsharded().gsi2pk];
  const pages = await Promise.all(
    partitions.map((partition) =>
      queryAll({
        TableName: config.tableName(),
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': partition },
      }),
    ),
  );
  return pages.flat().filter((item) => item.type === 'invocation') as unknown as InvocationRecord[];
}

/**
 * Ends what a platform that died left open: a pending invocation as failed
 * ("never started"), a running one as timed_out ("did not finish before its
 * timeout"). Each is a conditional write from the state it was read in, so a
 * worker that is in fact alive keeps what it wrote. Returns how many it ended.
 */
export async function reclaimOpenInvocations(filter: (record: InvocationRecord) => boolean = () => true): Promise<number> {
  let ended = 0;
  for (const record of await listOpenInvocations()) {
    if (!filter(record)) continue;
    const running = record.status === 'running';
    const done = await finishInvocation(
      record,
      running
        ? {
            status: 'timed_out',
            error_message: INVOCATION_ERRORS.reclaimedRunning,
            result: { status: 504, headers: {}, body: '' },
            console: [],
          }
        : {
            status: 'failed',
            error_message: INVOCATION_ERRORS.reclaimedPending,
            result: { status: 500, headers: {}, body: '' },
            console: [],
          },
      running ? 'running' : 'pending',
    );
    if (done) ended++;
  }
  return ended;
}

function sendInvocationMessage(id: string) {
  const message = { QueueUrl: config.queueUrl('invocations'), MessageBody: JSON.stringify({ invocation_id: id }) };
  return sqs().send(new SendMessageCommand(message));
}

/**
 * Sends the message of every pending invocation again, so that each one a stopped platform left
 * waiting runs after the start, whether or not the queue kept its message: the worker's claim is a
 * conditional write, so the one of two messages that comes second does nothing. Returns how many.
 */
export async function requeuePendingInvocations(): Promise<number> {
  let sent = 0;
  for (const record of await listOpenInvocations()) {
    if (record.status !== 'pending') continue;
    await sendInvocationMessage(record.id);
    sent++;
  }
  return sent;
}

// ---------------------------------------------------------------------------
// In-flight slots: the team item `FNINFLIGHT` holds a map invocation id ->
// expiry (epoch seconds). Taking a slot is one conditional write (`size(slots)
// < 10`), releasing one removes its key (idempotent). A slot a dead platform
// never released expires and is pruned when the cap refuses.

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

// ---------------------------------------------------------------------------
// The rate cap: 20 requests per minute per IP address across invoke and poll,
// a fixed one-minute window counter taken with a conditional ADD.

export const QUEUED_RATE_PER_MINUTE = 20;

/** The spec's 20; FUNCTIONS_QUEUED_RATE_PER_MINUTE raises it for tests that are not about the cap. */
export function queuedRatePerMinute(): number {
  const value = Number(process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE);
  return Number.isInteger(value) && value > 0 ? value : QUEUED_RATE_PER_MINUTE;
}

/** Takes one request from the IP's minute; returns null when allowed, else the seconds until the window frees. */
export async function takeQueuedRate(ip: string, now = new Date()): Promise<number | null> {
  const nowSeconds = epochSeconds(now);
  const start = nowSeconds - (nowSeconds % 60);
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.rateWindow(`fnqueued:ip:${ip || 'unknown'}`, start),
        UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
        ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':limit': queuedRatePerMinute(), ':type': 'rate_window', ':ttl': start + 120 },
      }),
    );
    return null;
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    return Math.max(1, start + 60 - nowSeconds);
  }
}

import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { deleteKeys } from '../aws/s3-lite.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { epochSeconds } from '../db/keys.ts';
import { TransactionRefused, transact } from '../db/transact.ts';
import type { ConsoleLine, QueuedRequest } from './host.ts';
import { inflightSlotReleaseWrite, releaseInflightSlot } from './inflight-slot-records.ts';
import {
  deleteInvocation,
  deleteInvocations,
  functionInvocationStubs,
  getInvocation,
  invocationEndWrite,
  logInvocationEnd,
  putInvocation,
  writeInvocationEnd,
  type InvocationEnd,
  type InvocationRecord,
  type InvocationStatus,
  type InvocationTrigger,
} from './invocation-records.ts';
import { loadPart, objectKey, partJson, storeObject, storePart, type StoredRequest, type StoredResult } from './invocation-payloads.ts';
import type { DeployedFunction } from './model.ts';
import { logCallbackLost, queueCallbackAttempt } from './callback-queue.ts';

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

/** Request, result and console output are kept 7 days; FUNCTIONS_INVOCATION_RETENTION_MS shortens it for tests. */
export function invocationRetentionMs(): number {
  return config.functionsInvocationRetentionMs();
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
  options: { callbackUrl?: string; trigger?: InvocationTrigger } = {},
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
    trigger: options.trigger ?? 'queued',
    created_at: createdAt,
    started_at: null,
    finished_at: null,
    expires_at: expires.toISOString(),
    ttl: epochSeconds(expires),
    ...(options.callbackUrl ? { callback_url: options.callbackUrl, callback_attempts: 0 } : {}),
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
  await putInvocation(requestPart.inline ? { ...record, request_json: requestPart.json } : record);
  try {
    await storing;
    await sendInvocationMessage(id);
  } catch (error) {
    await deleteInvocation(id);
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
 * output stored first (as objects when large), then the record, only from the
 * state it was read in. Returns false when another writer finished it first.
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
  const end: InvocationEnd = {
    status: finish.status,
    finished_at: now.toISOString(),
    response_status: finish.result.status,
    error_message: finish.error_message || undefined,
    runtime_ms: finish.runtimeMs === undefined ? undefined : Math.round(finish.runtimeMs),
    result_json: resultJson ?? undefined,
    console_json: consoleJson ?? undefined,
  };
  if (!(await endAndReleaseSlot(record, from, end))) {
    // Its project was deleted while it ran (the record went with it): what this just stored goes too.
    if (!(await getInvocation(record.id))) {
      await deleteKeys(config.bucket('bundles'), [objectKey(record, 'result'), objectKey(record, 'console')]);
    }
    return false;
  }
  // In the background: the first attempt is a message on the callbacks queue, never a wait of this run.
  if (record.callback_url) await queueCallbackAttempt(record.id, 1, 0).catch((error: Error) => logCallbackLost(record.id, error));
  return true;
}

/**
 * The end and the release of the in-flight slot in one transaction: a poll that sees the end finds the slot free
 * (an invoke right after it is not refused by the cap), and it is one table call. When the slot's item is gone (the
 * team's items deleted) or a racing write cancelled it, the end is written alone and the slot released after, as
 * two calls. False when the record was not in `from` (or is gone): then nothing was written.
 */
async function endAndReleaseSlot(record: InvocationRecord, from: 'running' | 'pending', end: InvocationEnd): Promise<boolean> {
  try {
    await transact([
      { name: 'end', write: invocationEndWrite(record.id, from, end) },
      { name: 'slot', write: inflightSlotReleaseWrite(record.team_id, record.id) },
    ]);
    logInvocationEnd(record, end);
    return true;
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
  }
  if (!(await writeInvocationEnd(record, from, end))) return false;
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
    const items = await functionInvocationStubs(projectId, name);
    const objects = items.flatMap((item) => PARTS.map((part) => objectKey(item, part)));
    for (let i = 0; i < objects.length; i += DELETE_KEYS_MAX) await deleteKeys(bucket, objects.slice(i, i + DELETE_KEYS_MAX));
    await deleteInvocations(items.map((item) => item.id));
    await Promise.all(items.filter((item) => !TERMINAL.includes(item.status)).map((item) => releaseInflightSlot(item.team_id, item.id)));
    deleted += items.length;
  }
  return deleted;
}

export function sendInvocationMessage(id: string) {
  const message = { QueueUrl: config.queueUrl('invocations'), MessageBody: JSON.stringify({ invocation_id: id }) };
  return sqs().send(new SendMessageCommand(message));
}

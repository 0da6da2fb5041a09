import { randomUUID } from 'node:crypto';
import { Readable, type Writable } from 'node:stream';
import { meta } from '../envelope.ts';
import type { ErrorEntry } from '../errors/api-error.ts';
import {
  FUNCTION_BODY_TOO_LARGE,
  FUNCTION_FAILED,
  FUNCTION_NOT_FOUND,
  FUNCTION_START_FAILED,
  FUNCTION_TIMEOUT,
} from '../errors/catalogue/functions.ts';
import { logger } from '../logger.ts';
import { traceIdFrom } from '../trace.ts';
import { FunctionHostError, type DoorForward, type DoorReply, type FunctionHost } from './host.ts';
import { functionBudgetMs, MAX_DOOR_BODY_BYTES, type DeployedFunction } from './model.ts';
import { type CachedReads, cachedReads } from './route-cache.ts';
import type { FunctionTelemetry } from './telemetry.ts';
import type { FunctionTailPublisher, TailEvent } from './tail.ts';
import { HOP_BY_HOP, INTERNAL_HEADER_PREFIX } from './runner/protocol.mjs';

/**
 * The HTTPS door (spec endpoint 11): a request for `{name}-{subdomain}.{function_domain}`
 * is resolved to the live deployment's function, bounded (10 MiB body, the
 * request budget) and forwarded to an instance through the host. The same
 * code answers behind the local platform's server and in the cloud router.
 *
 * - 404 for an unknown host, name or subdomain, a function not deployed, and a
 *   team not enrolled in the functions beta (one answer: nothing is revealed).
 * - 413 over 10 MiB; 500 with no handler text when the handler throws, rejects
 *   or returns a non-Response; 504 when the budget ends before any byte, the
 *   connection cut when it ends mid-body; the handler is left running.
 * - `x-scaler-http-cold-start` on every reply.
 */

export const COLD_START_HEADER = 'x-scaler-http-cold-start';

export interface DoorRequest {
  /** The Host header as sent (port allowed). */
  hostname: string;
  method: string;
  /** Path and query string as received. */
  target: string;
  /** Header pairs, names lower-cased. */
  headers: [string, string][];
  /** The body as it arrives; null when there is none. */
  body: Readable | null;
  /** Calls `onGone` once if the caller goes away before the reply has been written (at once if it has gone already). */
  onCallerGone?: (onGone: () => void) => void;
}

/** What the door sends before the body: Lambda response-stream metadata has the same shape. */
export interface DoorReplyHead {
  statusCode: number;
  headers: Record<string, string>;
  /** Each `Set-Cookie` on its own. */
  cookies: string[];
}

export type OpenDoorReply = (head: DoorReplyHead) => Writable;

export interface FunctionDoorDeps {
  host: FunctionHost;
  /** The live deployment's function answering at this Host, or null. */
  resolve: (hostname: string) => Promise<DeployedFunction | null>;
  isEnrolled: (teamId: string) => Promise<boolean>;
  telemetry?: FunctionTelemetry;
  /** Live tail: each call's error, console (hosts that gather it per call) and end go to the watchers, if any. */
  tail?: FunctionTailPublisher;
}

/** What the door saw of one call, for the live tail. */
interface CallSeen {
  status: number | null;
  reply: DoorReply | null;
}

/** The tail's name for how a call ended without the handler's reply, by the status the door answered. */
const DOOR_OUTCOMES: Record<number, string> = { 413: 'body_too_large', 500: 'failed', 504: 'timed_out' };

class BodyTooLarge extends Error {}

interface Route {
  fn: DeployedFunction | null;
  /** The function's own hostname, the `host` its handler sees. */
  publicHostname: string;
}

/**
 * The whole body, or BodyTooLarge past 10 MiB. An oversized body is still read
 * (and dropped) up to twice the limit, so the caller, still sending, gets the
 * 413 rather than a reset connection; beyond that the stream is destroyed.
 */
function readBounded(body: Readable | null, declaredLength: number | null): Promise<Buffer | null> {
  if (!body) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = declaredLength !== null && declaredLength > MAX_DOOR_BODY_BYTES;
    if (tooLarge && declaredLength! > 2 * MAX_DOOR_BODY_BYTES) {
      body.destroy();
      return reject(new BodyTooLarge());
    }
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_DOOR_BODY_BYTES) tooLarge = true;
      if (size > 2 * MAX_DOOR_BODY_BYTES) {
        body.destroy();
        reject(new BodyTooLarge());
      } else if (!tooLarge) chunks.push(chunk);
    });
    body.on('end', () => (tooLarge ? reject(new BodyTooLarge()) : resolve(Buffer.concat(chunks))));
    body.on('error', reject);
  });
}

/**
 * The body's first chunk (and any that arrive in the same turn), or all of it
 * when it ends that soon; null when the signal aborts first. The stream is left
 * paused where it was not finished.
 */
function firstBytes(body: Readable, signal: AbortSignal): Promise<{ chunks: Buffer[]; ended: boolean } | { failed: unknown } | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let ended = false;
    let decided = false;
    const decide = (value: { chunks: Buffer[]; ended: boolean } | { failed: unknown } | null) => {
      if (decided) return;
      decided = true;
      if (!ended) body.pause();
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunks.length === 1) setImmediate(() => decide({ chunks, ended }));
    };
    const onEnd = () => {
      ended = true;
      decide({ chunks, ended: true });
    };
    const onError = (error: unknown) => decide({ failed: error });
    const onAbort = () => decide(null);
    if (signal.aborted) return resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    body.on('error', onError);
    body.on('end', onEnd);
    body.on('data', onData);
  });
}

/** The door's error envelope as the whole reply (the caller did nothing wrong, or the function failed). */
function fail(request: DoorRequest, open: OpenDoorReply, entry: ErrorEntry): void {
  const traceId = traceIdFrom(request.headers.find(([name]) => name === 'traceparent')?.[1]);
  const body = JSON.stringify({ code: entry.code, details: null, error: entry.message, meta: meta(randomUUID(), traceId) });
  const out = open({
    statusCode: entry.status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      [COLD_START_HEADER]: 'false',
    },
    cookies: [],
  });
  out.end(body);
}

/** What the host gets: the caller's headers without the connection-level and internal ones, the function's own Host. */
function forwardOf(request: DoorRequest, publicHostname: string, body: Buffer | null): DoorForward {
  const headers: [string, string][] = request.headers
    .filter(([name]) => !HOP_BY_HOP.has(name) && !name.startsWith(INTERNAL_HEADER_PREFIX) && name !== 'host' && name !== 'content-length')
    .map(([name, value]) => [name.toLowerCase(), value]);
  headers.unshift(['host', publicHostname]);
  if (body && body.length > 0) headers.push(['content-length', String(body.length)]);
  const queryAt = request.target.indexOf('?');
  return {
    method: request.method.toUpperCase(),
    query: queryAt >= 0 ? request.target.slice(queryAt + 1) : '',
    headers,
    body: body && body.length > 0 ? Readable.from([body]) : null,
  };
}

/** The reply's head for the caller: the handler's headers (each cookie apart) and the cold-start header. */
function replyHeadOf(reply: DoorReply): DoorReplyHead {
  const head: DoorReplyHead = { statusCode: reply.status, headers: {}, cookies: [] };
  for (const [rawName, value] of reply.headers) {
    const name = rawName.toLowerCase();
    if (HOP_BY_HOP.has(name) || name.startsWith(INTERNAL_HEADER_PREFIX) || name === COLD_START_HEADER) continue;
    if (name === 'set-cookie') head.cookies.push(value);
    else head.headers[name] = head.headers[name] === undefined ? value : `${head.headers[name]}, ${value}`;
  }
  head.headers[COLD_START_HEADER] = String(reply.coldStart);
  return head;
}

/** The rest of a streamed body to the caller; resolves when it ends or is cut (`onExpiry` runs first when the budget ends it). */
function pipeReply(stream: Readable, out: Writable, signal: AbortSignal, onExpiry: () => void, fn: DeployedFunction): Promise<void> {
  return new Promise<void>((resolve) => {
    let over = false;
    const finish = () => {
      if (over) return;
      over = true;
      signal.removeEventListener('abort', expire);
      resolve();
    };
    // Mid-body: the only honest signal left is to cut the connection.
    const cut = (why?: unknown) => {
      if (over) return;
      if (why !== undefined) logger.warn('function reply stream failed', { function_id: fn.function_id, error: String(why) });
      stream.destroy();
      out.destroy();
      finish();
    };
    const expire = () => {
      onExpiry();
      cut();
    };
    signal.addEventListener('abort', expire, { once: true });
    stream.on('error', cut);
    out.on('error', () => cut());
    out.on('finish', finish);
    out.on('close', () => (out.writableFinished ? finish() : cut()));
    stream.pipe(out);
  });
}

/** A hostname's route, read at most once per routeCacheMs() (by the Host header as sent: a caller sends the same one). */
function routeCache(deps: FunctionDoorDeps): CachedReads<Route> {
  return cachedReads(async (hostname) => {
    let fn = await deps.resolve(hostname);
    if (fn && !(await deps.isEnrolled(fn.team_id))) fn = null;
    return { fn, publicHostname: fn ? new URL(fn.url).host : '' };
  });
}

export function createFunctionDoor(deps: FunctionDoorDeps) {
  const route = routeCache(deps);

  async function answer(request: DoorRequest, open: OpenDoorReply): Promise<void> {
    const started = Date.now();
    // A route and a watch read lately answer without a promise: each await is a turn on the warm path.
    const { fn, publicHostname } = route.peek(request.hostname)?.value ?? (await route(request.hostname));
    if (!fn) {
      request.body?.resume();
      return fail(request, open, FUNCTION_NOT_FOUND);
    }
    // Nobody watching (the common case) costs a cached look-up: nothing is gathered or sent.
    if (!deps.tail || !(deps.tail.watchingNow(fn) ?? (await deps.tail.watching(fn))))
      return call(deps, fn, publicHostname, request, open, started, null);
    return watchedCall(deps.tail, fn, request, open, started, (tracked, seen) =>
      call(deps, fn, publicHostname, request, tracked, started, seen),
    );
  }

  return { answer };
}

/** One call through the host: the body bounded, the budget, the slot, the reply or the door's envelope. */
async function call(
  deps: FunctionDoorDeps,
  fn: DeployedFunction,
  publicHostname: string,
  request: DoorRequest,
  open: OpenDoorReply,
  started: number,
  seen: CallSeen | null,
): Promise<void> {
  let body: Buffer | null = null;
  // A request without a body (GET, HEAD) takes no step here: each await is a turn and a promise on the warm path.
  if (request.body) {
    const declared = request.headers.find(([name]) => name === 'content-length')?.[1];
    try {
      body = await readBounded(request.body, declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : null);
    } catch (error) {
      if (!(error instanceof BodyTooLarge)) throw error;
      deps.telemetry?.limitHit(fn, 'body_413');
      return fail(request, open, FUNCTION_BODY_TOO_LARGE);
    }
  }
  const forward = forwardOf(request, publicHostname, body);
  if (seen) forward.tail = true;

  // The budget bounds what the caller sees; when it ends the door stops waiting, the handler runs on.
  const budget = new AbortController();
  const remaining = Math.max(0, functionBudgetMs() - (Date.now() - started));
  let expired = false;
  let callerGone = false;
  const timer = setTimeout(() => {
    expired = true;
    budget.abort(new Error('function budget expired'));
  }, remaining);
  // Heard after the call has ended it aborts a signal nobody listens to any more.
  request.onCallerGone?.(() => {
    callerGone = true;
    budget.abort(new Error('caller went away'));
  });
  let releaseSlot: (() => Promise<void>) | undefined;
  try {
    let reply;
    try {
      // A host whose instances do not cap the function (the cloud): the request waits for a slot within its budget.
      if (deps.host.holdRequestSlot) releaseSlot = await deps.host.holdRequestSlot(fn, budget.signal);
      reply = await deps.host.forwardHttp(fn, forward, budget.signal);
    } catch (error) {
      return failedForward(deps, fn, request, open, error, expired, callerGone);
    }
    deps.telemetry?.httpRequest(fn, reply.coldStart);
    if (seen) seen.reply = reply;
    if (reply.outcome !== 'response') {
      // The runner's bare 500 carries nothing the caller may see; the envelope says only that it failed.
      if (!Buffer.isBuffer(reply.body)) reply.body.resume();
      logger.info('function handler failed', { function_id: fn.function_id, outcome: reply.outcome });
      return fail(request, open, FUNCTION_FAILED);
    }
    const head = replyHeadOf(reply);
    const bodiless = request.method.toUpperCase() === 'HEAD' || reply.status === 204 || reply.status === 304;
    if (Buffer.isBuffer(reply.body)) return sendWhole(open, head, reply.body, bodiless);
    // Only a streamed reply takes this further step (and its promise): a whole one has left above.
    await streamReply(deps, fn, request, open, head, bodiless, reply.body, budget.signal, () => expired);
  } finally {
    clearTimeout(timer);
    // The reply has ended, failed or been cut: the slot goes back now (a Lambda that returned is frozen).
    if (releaseSlot)
      await releaseSlot().catch((error: unknown) =>
        logger.warn('request slot release failed', { function_id: fn.function_id, error: String(error) }),
      );
  }
}

/** The host could not answer: the budget ended (504), the caller went away (nothing), or the instance failed. */
function failedForward(
  deps: FunctionDoorDeps,
  fn: DeployedFunction,
  request: DoorRequest,
  open: OpenDoorReply,
  error: unknown,
  expired: boolean,
  callerGone: boolean,
): void {
  if (expired) {
    deps.telemetry?.limitHit(fn, 'http_timeout');
    fail(request, open, FUNCTION_TIMEOUT);
    return;
  }
  if (callerGone) return;
  if (!(error instanceof FunctionHostError)) throw error;
  if (error.kind === 'out_of_memory' || error.kind === 'instance_crashed') deps.telemetry?.limitHit(fn, error.kind);
  logger.warn('function request failed in its host', { function_id: fn.function_id, kind: error.kind, message: error.message });
  fail(request, open, error.kind === 'start_failed' ? FUNCTION_START_FAILED : FUNCTION_FAILED);
}

/** A reply whose body is all here leaves in one write, with its length. */
function sendWhole(open: OpenDoorReply, head: DoorReplyHead, body: Buffer, bodiless: boolean): void {
  if (head.headers['content-length'] === undefined && !bodiless) head.headers['content-length'] = String(body.length);
  open(head).end(body);
}

/**
 * A streamed reply. The head waits for the body's first bytes: a small reply then leaves in one write with its
 * length, and a budget that ends before any byte is still a 504.
 */
async function streamReply(
  deps: FunctionDoorDeps,
  fn: DeployedFunction,
  request: DoorRequest,
  open: OpenDoorReply,
  head: DoorReplyHead,
  bodiless: boolean,
  stream: Readable,
  budget: AbortSignal,
  expired: () => boolean,
): Promise<void> {
  const first = await firstBytes(stream, budget);
  if (first === null) {
    stream.destroy();
    if (!expired()) return;
    deps.telemetry?.limitHit(fn, 'http_timeout');
    return fail(request, open, FUNCTION_TIMEOUT);
  }
  if ('failed' in first) {
    logger.warn('function reply stream failed', { function_id: fn.function_id, error: String(first.failed) });
    return fail(request, open, FUNCTION_FAILED);
  }
  if (first.ended) return sendWhole(open, head, Buffer.concat(first.chunks), bodiless);
  const out = open(head);
  for (const chunk of first.chunks) out.write(chunk);
  await pipeReply(
    stream,
    out,
    budget,
    () => {
      if (expired()) deps.telemetry?.limitHit(fn, 'http_timeout');
    },
    fn,
  );
}

/** A call someone tails: what the caller got is noted as it goes, and its events published once it has ended. */
async function watchedCall(
  tail: FunctionTailPublisher,
  fn: DeployedFunction,
  request: DoorRequest,
  open: OpenDoorReply,
  started: number,
  call: (open: OpenDoorReply, seen: CallSeen) => Promise<void>,
): Promise<void> {
  const seen: CallSeen = { status: null, reply: null };
  try {
    await call((head) => {
      seen.status = head.statusCode;
      return open(head);
    }, seen);
  } finally {
    tail.publish(fn, ...tailEventsOf(request, seen, Date.now() - started));
  }
}

/** A watched call's events: its console lines (when its host gathered them), the error it threw, its end. */
function tailEventsOf(request: DoorRequest, seen: CallSeen, durationMs: number): TailEvent[] {
  const at = new Date().toISOString();
  const events: TailEvent[] = (seen.reply?.console ?? []).map((line) => ({ type: 'console', ...line }));
  if (seen.reply?.error) events.push({ type: 'error', at, message: seen.reply.error.message, stack: seen.reply.error.stack });
  const outcome = seen.reply ? seen.reply.outcome : seen.status === null ? 'caller_gone' : (DOOR_OUTCOMES[seen.status] ?? 'failed');
  events.push({ type: 'call', at, method: request.method.toUpperCase(), status: seen.status, duration_ms: durationMs, outcome });
  return events;
}

export type FunctionDoor = ReturnType<typeof createFunctionDoor>;

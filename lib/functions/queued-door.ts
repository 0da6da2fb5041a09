import { createHash, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ApiError } from '../errors/api-error.ts';
import { RATE_LIMITED } from '../errors/catalogue/request.ts';
import {
  CALLBACK_URL_INVALID,
  FUNCTION_NOT_FOUND,
  INVOCATION_NOT_FOUND,
  TOO_MANY_CONCURRENT_INVOCATIONS,
} from '../errors/catalogue/functions.ts';
import { callbackUrlRefusals, checkCallbackUrl } from './callback-url.ts';
import type { QueuedRequest } from './host.ts';
import { MAX_INFLIGHT_PER_TEAM, releaseInflightSlot, takeInflightSlot } from './inflight-slot-records.ts';
import { getInvocation, type InvocationRecord, type InvocationTrigger } from './invocation-records.ts';
import { createInvocation, MAX_QUEUED_BODY_BYTES } from './invocations.ts';
import { queuedRatePerMinute, takeQueuedRate } from './queued-rate.ts';
import type { DeployedFunction } from './model.ts';
import { isTeamEnrolledInFunctions, projectOfSubdomain, resolveFunctionBySubdomain, resolveFunctionInProject } from './resolve.ts';
import { cachedReads } from './route-cache.ts';
import type { FunctionTelemetry } from './telemetry.ts';
import { idempotent } from '../idempotency/idempotency.ts';

/**
 * The queued door's two public endpoints (spec endpoint 10): invoke and poll.
 * Both count against the caller's 20 requests a minute; invoke also takes one
 * of the team's 10 in-flight slots, released when the invocation ends.
 */

/** Headers the platform added on the way in (API Gateway), or that the body cut makes wrong: not the caller's. */
const NOT_FORWARDED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-amzn-trace-id',
]);

/** The handler's Request, from the invoke POST: its method, query string, headers (cookies put back) and body cut at 1 MB. */
export function queuedRequestOf(event: APIGatewayProxyEventV2, body: Buffer): QueuedRequest {
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    const lower = name.toLowerCase();
    if (value === undefined || NOT_FORWARDED.has(lower) || lower.startsWith('x-slipway-')) continue;
    headers.push([lower, value]);
  }
  if (event.cookies?.length) headers.push(['cookie', event.cookies.join('; ')]);
  return {
    method: event.requestContext?.http?.method ?? 'POST',
    query: event.rawQueryString ?? '',
    headers,
    body: body.length > MAX_QUEUED_BODY_BYTES ? body.subarray(0, MAX_QUEUED_BODY_BYTES) : body,
  };
}

/**
 * The caller's X-Callback-Url, checked (lib/functions/callback-url.ts), or undefined without one. A bad one is
 * 400 CALLBACK_URL_INVALID, with the reason's sentence, before anything is counted or made.
 */
export async function checkedCallbackUrl(headers: Record<string, string>): Promise<string | undefined> {
  const raw = headers['x-callback-url'];
  if (raw === undefined) return undefined;
  const check = await checkCallbackUrl(raw);
  if (!check.ok)
    throw new ApiError(CALLBACK_URL_INVALID, { message: callbackUrlRefusals[check.reason], details: { reason: check.reason } });
  return raw;
}

/** 429 with Retry-After once this IP address has made 20 invoke or poll requests this minute. */
async function rateCap(ip: string, limitHit: () => Promise<void>): Promise<void> {
  const retryAfter = await takeQueuedRate(ip);
  if (retryAfter === null) return;
  await limitHit();
  throw new ApiError(RATE_LIMITED, {
    headers: { 'Retry-After': String(retryAfter) },
    details: { limit: 'queued_invocations_per_ip', max_per_minute: queuedRatePerMinute(), retry_after_seconds: retryAfter },
  });
}

// What the queued door looks up is kept per process as the HTTPS door keeps its routes (route-cache.ts): a poll,
// the door's most frequent request, then reads only the invocation and the caller's rate window.
const enrolments = cachedReads(isTeamEnrolledInFunctions);
const subdomainProjects = cachedReads(projectOfSubdomain);
const liveFunctions = cachedReads(async (key) => {
  const [subdomain, name] = JSON.parse(key) as [string, string];
  const fn = await resolveFunctionBySubdomain(subdomain, name);
  return fn && (await enrolments(fn.team_id)) ? fn : null;
});

function liveFunction(subdomain: string, name: string): Promise<DeployedFunction | null> {
  return liveFunctions(JSON.stringify([subdomain.toLowerCase(), name]));
}

export function pollUrl(subdomain: string, name: string, id: string): string {
  return `/api/v1/public/functions/${encodeURIComponent(subdomain)}/${encodeURIComponent(name)}/invocations/${id}`;
}

const INVOKE_ROUTE = 'POST /api/v1/public/functions/{subdomain}/{name}';

/** What makes two invokes "the same request" under one Idempotency-Key: method, query string and body (hashed). */
export function idempotentRequest(request: QueuedRequest): { method: string; query: string; body_sha256: string } {
  return { method: request.method, query: request.query, body_sha256: createHash('sha256').update(request.body).digest('hex') };
}

type Invoked = { invocation_id: string; status: 'pending'; poll_url: string };

/**
 * A new pending invocation: the live function, the caller's rate, the team's in-flight slot. With an
 * Idempotency-Key (checked by the handler), the first request under the key within 24 h makes the invocation and
 * a repeat of the same request (method, query, body) answers the same reply and makes none; the key is the
 * function's (another function's same key is another key) and is released when no invocation was made.
 */
export async function invoke(input: {
  subdomain: string;
  name: string;
  sourceIp: string;
  request: QueuedRequest;
  telemetry: FunctionTelemetry;
  idempotencyKey?: string;
  /** A checked X-Callback-Url (checkedCallbackUrl). */
  callbackUrl?: string;
}): Promise<Invoked> {
  // The cap and the look-up at once; a refusal answers before anything the look-up found is used.
  const lookup = liveFunction(input.subdomain, input.name);
  lookup.catch(() => undefined);
  await rateCap(input.sourceIp, async () => {
    const fn = await lookup;
    if (fn) input.telemetry.limitHit(fn, 'queued_rate_limit');
  });
  const fn = await lookup;
  if (!fn) throw new ApiError(FUNCTION_NOT_FOUND);
  const reply = (id: string): Invoked => ({ invocation_id: id, status: 'pending', poll_url: pollUrl(fn.subdomain, fn.name, id) });
  return idempotent({
    teamId: fn.team_id,
    key: input.idempotencyKey,
    keyScope: `function:${fn.project_id}:${fn.name}`,
    scope: INVOKE_ROUTE,
    body: idempotentRequest(input.request),
    execute: async () => {
      const id = await startInvocation(fn, input.request, input.telemetry, { callbackUrl: input.callbackUrl });
      return { result: reply(id), stored: { invocation_id: id } };
    },
    replay: async (stored) => reply(stored.invocation_id),
  });
}

/**
 * A pending invocation of a live function, whatever started it (the queued door, a schedule's tick, a run now):
 * one of the team's in-flight slots (429 TOO_MANY_CONCURRENT_INVOCATIONS at the cap), the record, the message.
 */
export async function startInvocation(
  fn: DeployedFunction,
  request: QueuedRequest,
  telemetry: FunctionTelemetry,
  options: { callbackUrl?: string; trigger?: InvocationTrigger; id?: string } = {},
): Promise<string> {
  const id = options.id ?? randomUUID();
  if (!(await takeInflightSlot(fn.team_id, id))) {
    telemetry.limitHit(fn, 'queued_inflight_cap');
    throw new ApiError(TOO_MANY_CONCURRENT_INVOCATIONS, { details: { max_in_flight: MAX_INFLIGHT_PER_TEAM } });
  }
  try {
    await createInvocation(fn, request, id, new Date(), { callbackUrl: options.callbackUrl, trigger: options.trigger });
  } catch (error) {
    await releaseInflightSlot(fn.team_id, id);
    throw error;
  }
  return id;
}

/**
 * Run now (POST /api/v1/projects/{id}/functions/{name}/runs): a queued invocation of the project's live function
 * with trigger `manual`, through the same path as the queued door (in-flight cap, record, message), answered as the
 * door answers. Its request is a POST with the body sent, if any (and its content type). 404 FUNCTION_NOT_FOUND
 * for a function the live deployment does not have, or a team outside the functions beta (as the doors answer).
 */
export async function runNow(input: {
  projectId: string;
  name: string;
  body: Buffer;
  contentType?: string;
  telemetry: FunctionTelemetry;
}): Promise<Invoked> {
  const fn = await resolveFunctionInProject(input.projectId, input.name);
  if (!fn || !(await isTeamEnrolledInFunctions(fn.team_id))) throw new ApiError(FUNCTION_NOT_FOUND);
  const request: QueuedRequest = {
    method: 'POST',
    query: '',
    headers: input.body.length > 0 && input.contentType ? [['content-type', input.contentType]] : [],
    body: input.body.length > MAX_QUEUED_BODY_BYTES ? input.body.subarray(0, MAX_QUEUED_BODY_BYTES) : input.body,
  };
  const id = await startInvocation(fn, request, input.telemetry, { trigger: 'manual' });
  return { invocation_id: id, status: 'pending', poll_url: pollUrl(fn.subdomain, fn.name, id) };
}

/**
 * The invocation a poll names: the subdomain's project (its team enrolled)
 * and the function name must be the invocation's own, else 404. The function
 * need not be live any more: an invocation that ended because its function
 * was removed is still readable.
 */
export async function pollTarget(input: {
  subdomain: string;
  name: string;
  id: string;
  sourceIp: string;
  telemetry: FunctionTelemetry;
}): Promise<InvocationRecord> {
  // Read together, and beside the cap. A refusal by the cap answers before anything read is used.
  const reads = Promise.all([subdomainProjects(input.subdomain.toLowerCase()), getInvocation(input.id.toLowerCase())]);
  reads.catch(() => undefined);
  await rateCap(input.sourceIp, async () => {
    const fn = await liveFunction(input.subdomain, input.name);
    if (fn) input.telemetry.limitHit(fn, 'queued_rate_limit');
  });
  const [projectId, record] = await reads;
  if (!projectId) throw new ApiError(FUNCTION_NOT_FOUND);
  if (!record || record.project_id !== projectId || record.function_name !== input.name) throw new ApiError(INVOCATION_NOT_FOUND);
  if (!(await enrolments(record.team_id))) throw new ApiError(FUNCTION_NOT_FOUND);
  return record;
}

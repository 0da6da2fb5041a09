import middy from '@middy/core';
import httpCors from '@middy/http-cors';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { $ZodError, safeParse, type $ZodType, type output } from 'zod/v4/core';
import { config } from '../config.ts';
import { isCrossSiteWrite, sessionTokenFromCookies } from '../identity/session-cookie.ts';
import type { Principal, TeamAccess } from '../identity/principal.ts';
import { authenticate, authorizeTeam, checkPrincipal, currentTeam } from './authorize.ts';
import { errorResponse, meta, successResponse, type Meta } from '../envelope.ts';
import { ApiError, isApiError, type ErrorEntry } from '../errors/api-error.ts';
import {
  CROSS_SITE_REQUEST_REFUSED,
  INTERNAL_ERROR,
  SERVICE_UNAVAILABLE,
  INVALID_JSON,
  PAYLOAD_TOO_LARGE,
  UNSUPPORTED_MEDIA_TYPE,
  VALIDATION_FAILED,
} from '../errors/catalogue/request.ts';
import { logger, requestLogger, type RequestLogger } from '../logger.ts';
import type { RouteRow } from './routes.ts';
import { traceIdFrom } from '../trace.ts';

/** Largest JSON body accepted unless a handler says otherwise. */
const DEFAULT_MAX_JSON_BYTES = 1024 * 1024;

export interface HandlerContext<B, Q> {
  event: APIGatewayProxyEventV2;
  requestId: string;
  traceId: string;
  log: RequestLogger;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
  params: Record<string, string>;
  query: Q;
  body: B;
  /** The raw body bytes, for handlers that declare `rawBody`. */
  rawBody: Buffer;
  /** The authenticated caller; null only on public routes. */
  principal: Principal | null;
  /** The caller's current team, for rules on the current team. */
  team: TeamAccess | null;
  /** Applies the route's team rule to a team addressed by UUID or slug (rules on a resource's team). */
  authorizeTeam(idOrSlug: string): Promise<TeamAccess>;
  sourceIp: string;
  /** Scheme and host the caller used, for absolute links. */
  baseUrl: string;
}

export type HandlerResult =
  | { status?: number; data: unknown; headers?: Record<string, string> }
  | { raw: APIGatewayProxyStructuredResultV2 };

interface HandlerOptions<BS extends $ZodType | undefined, QS extends $ZodType | undefined> {
  body?: BS;
  query?: QS;
  /**
   * Accept a body of at most this many bytes unparsed, given to the handler as `rawBody` (non-JSON bodies, and
   * JSON whose bytes are signed). `mediaType` is what the OpenAPI document shows (default application/octet-stream).
   */
  rawBody?: { maxBytes: number; mediaType?: string };
  maxJsonBytes?: number;
  /**
   * Looks at the parsed JSON body before it is validated; a result it returns is the reply, and the handler
   * never runs (an abuse report's filled honeypot gets its success-shaped reply whatever else the body holds).
   */
  beforeValidation?: (body: unknown) => HandlerResult | undefined;
  /** The error code of a body that fails its schema (default VALIDATION_FAILED); `details.fields` as always. */
  validationError?: ErrorEntry;
  /**
   * Path parameters the spec calls UUIDs, each with the 400 code its route answers when the value is not one
   * (checked once the caller is authenticated, before the handler runs).
   */
  uuidParams?: Readonly<Record<string, ErrorEntry>>;
}

type Infer<S> = S extends $ZodType ? output<S> : undefined;

interface PipelineState {
  meta: Meta;
  log: RequestLogger;
}

/** The request schemas each handler declared, by route key: the source of the OpenAPI document. */
export const handlerSchemas = new Map<string, { body?: $ZodType; query?: $ZodType; rawBody: string | null; uuidParams: string[] }>();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Per-invocation state, keyed by the Lambda context object of the invocation. */
const pipelineState = new WeakMap<Context, PipelineState>();

function lowerCaseHeaders(headers: APIGatewayProxyEventV2['headers'] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}

/** zod issues as `details.fields`: every failing field, by dotted path. */
export function validationDetails(error: $ZodError, prefix?: string) {
  return {
    fields: error.issues.map((issue) => ({
      field: [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || '(root)',
      message: issue.message,
      code: issue.code,
    })),
  };
}

function bodyBytes(event: APIGatewayProxyEventV2): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
}

function parseJsonBody(event: APIGatewayProxyEventV2, headers: Record<string, string>, maxBytes: number): unknown {
  const bytes = bodyBytes(event);
  if (bytes.length === 0) return undefined;
  if (bytes.length > maxBytes) {
    throw new ApiError(PAYLOAD_TOO_LARGE, { details: { max_bytes: maxBytes } });
  }
  const type = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new ApiError(UNSUPPORTED_MEDIA_TYPE, { details: { content_type: type || null } });
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ApiError(INVALID_JSON);
  }
}

function validate<S extends $ZodType>(schema: S, value: unknown, where: 'body' | 'query', code: ErrorEntry = VALIDATION_FAILED): output<S> {
  const result = safeParse(schema, value);
  if (!result.success) throw new ApiError(code, { details: validationDetails(result.error, where === 'query' ? 'query' : undefined) });
  return result.data;
}

/**
 * A route's Lambda that is about to reach its Timeout answers before Lambda ends it, so the caller gets an envelope
 * it can retry (503 SERVICE_UNAVAILABLE with Retry-After) rather than API Gateway's bare error or an "unexpected" 500,
 * and the log names the cause. The margin leaves time to write that answer.
 */
const RUN_OUT_MARGIN_MS = 100;
const OUT_OF_TIME_RETRY_AFTER_SECONDS = 5;

/** What middy throws, in place of the handler's answer, when the route's time is up. */
class RouteOutOfTime extends Error {
  override name = 'RouteOutOfTime';
}

/** Turns any thrown value into the error envelope; nothing internal reaches the caller. */
export function errorToResponse(error: unknown, m: Meta, log: RequestLogger): APIGatewayProxyStructuredResultV2 {
  if (error instanceof RouteOutOfTime) {
    log.error('request ran out of time: answered 503 before Lambda ends the route');
    return errorResponse(
      SERVICE_UNAVAILABLE.status,
      { code: SERVICE_UNAVAILABLE.code, error: SERVICE_UNAVAILABLE.message, details: null },
      m,
      {
        'retry-after': String(OUT_OF_TIME_RETRY_AFTER_SECONDS),
      },
    );
  }
  if (isApiError(error)) {
    if (error.status >= 500) log.error('request failed', { code: error.code });
    return errorResponse(error.status, { code: error.code, error: error.message, details: error.details }, m, error.headers);
  }
  if (error instanceof $ZodError) {
    return errorResponse(400, { code: 'VALIDATION_FAILED', error: 'The request is invalid.', details: validationDetails(error) }, m);
  }
  log.error('unexpected error', error as Error);
  const internal = new ApiError(INTERNAL_ERROR);
  return errorResponse(internal.status, { code: internal.code, error: internal.message, details: null }, m);
}

/** Once the team a request acts for is known, its later lines (its error, if any) carry `team_id` (a saved query finds a team's errors by it). */
function withTeamInLog(state: PipelineState, teamId: string): void {
  state.log = state.log.createChild({ persistentKeys: { team_id: teamId } });
}

type HttpMiddleware = middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>;

/** middy's CORS, one per set of origins (it compiles them when made). */
const corsByOrigins = new Map<string, HttpMiddleware>();

/**
 * CORS by the origins of the platform that serves the request, looked up per request: a handler module is made once
 * per process, and a local process may serve several platforms (a Lambda's origins never change, so it makes one).
 */
function corsMiddleware(): HttpMiddleware {
  const current = (): HttpMiddleware => {
    const origins = config.corsOrigins();
    const key = origins.join(',');
    let cors = corsByOrigins.get(key);
    if (!cors) {
      cors = httpCors({ origins, credentials: true, exposeHeaders: 'Deprecation, Link, Retry-After, X-Request-Id' });
      corsByOrigins.set(key, cors);
    }
    return cors;
  };
  return {
    before: (request) => current().before?.(request),
    after: (request) => current().after?.(request),
    onError: (request) => current().onError?.(request),
  };
}

/** Request ids, trace ids, the logger, and the error envelope for anything thrown. */
function envelopeMiddleware(route: string): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    before: (request) => {
      const headers = lowerCaseHeaders(request.event.headers);
      const requestId = request.event.requestContext?.requestId ?? request.context.awsRequestId;
      const traceId = traceIdFrom(headers.traceparent);
      pipelineState.set(request.context, {
        meta: meta(requestId, traceId),
        log: requestLogger(requestId, traceId, route),
      });
    },
    onError: (request) => {
      const state = pipelineState.get(request.context);
      const m = state?.meta ?? meta(request.context.awsRequestId ?? 'unknown', traceIdFrom(undefined));
      request.response = errorToResponse(request.error, m, state?.log ?? logger);
    },
  };
}

/**
 * Wraps an endpoint implementation into a Lambda handler for API Gateway HTTP
 * API (payload v2): envelope, ids, logging, body parsing, validation, the
 * route row's authorization rule and CORS.
 */
export function defineHandler<BS extends $ZodType | undefined = undefined, QS extends $ZodType | undefined = undefined>(
  key: string,
  options: HandlerOptions<BS, QS>,
  impl: (ctx: HandlerContext<Infer<BS>, Infer<QS>>) => Promise<HandlerResult>,
) {
  handlerSchemas.set(key, {
    body: options.body,
    query: options.query,
    rawBody: options.rawBody ? (options.rawBody.mediaType ?? 'application/octet-stream') : null,
    uuidParams: Object.keys(options.uuidParams ?? {}),
  });
  let rule: Promise<RouteRow['access']> | undefined;
  return buildHandler(key, () => (rule ??= accessRuleOf(key)), options, impl);
}

/**
 * The access rule of a route row. A deployed handler's bundle carries its own
 * row's rule, inlined at build time (infra/bundling.ts, `routeDefine`), and so
 * leaves out the whole route table (over 10 KB, growing with every endpoint);
 * unbundled (the local platform, tests) the rule comes from the table. Keep
 * the if/else with the import in the else branch: that is what lets esbuild
 * drop the table from a bundle. A bundle built for another route fails closed.
 */
async function accessRuleOf(key: string): Promise<RouteRow['access']> {
  if (process.env.SLIPWAY_BUNDLED_ROUTE) {
    const bundled = JSON.parse(process.env.SLIPWAY_BUNDLED_ROUTE) as { key: string; access: RouteRow['access'] };
    if (bundled.key !== key) throw new Error(`This bundle was built for ${bundled.key}, not ${key}`);
    return bundled.access;
  } else {
    const { findRoute } = await import('./routes.ts');
    return findRoute(key).access;
  }
}

export function buildHandler<BS extends $ZodType | undefined, QS extends $ZodType | undefined>(
  key: string,
  ruleSource: RouteRow['access'] | (() => Promise<RouteRow['access']>),
  options: HandlerOptions<BS, QS>,
  impl: (ctx: HandlerContext<Infer<BS>, Infer<QS>>) => Promise<HandlerResult>,
) {
  const core = async (event: APIGatewayProxyEventV2, context: Context) => {
    const state = pipelineState.get(context)!;
    const headers = lowerCaseHeaders(event.headers);
    const rule = typeof ruleSource === 'function' ? await ruleSource() : ruleSource;

    let principal: Principal | null = null;
    let team: TeamAccess | null = null;
    if (rule.kind !== 'public') {
      principal = await authenticate(headers.authorization, sessionTokenFromCookies(event.cookies));
      // The cookie is the one credential a browser attaches by itself: a write it carries must come from the console.
      if (principal.via === 'cookie' && isCrossSiteWrite(event.requestContext?.http?.method ?? 'GET', headers)) {
        throw new ApiError(CROSS_SITE_REQUEST_REFUSED);
      }
      checkPrincipal(principal, rule);
      if (rule.kind === 'team' && rule.team === 'current') {
        team = await currentTeam(principal, rule.minRole, headers['x-team-id']);
        withTeamInLog(state, team.team.id);
      }
    }

    const params = (event.pathParameters ?? {}) as Record<string, string>;
    for (const [name, code] of Object.entries(options.uuidParams ?? {})) {
      if (!UUID.test(params[name] ?? '')) throw new ApiError(code, { details: { param: name } });
    }

    let body: unknown;
    let rawBody: Buffer = Buffer.alloc(0);
    if (options.rawBody) {
      rawBody = bodyBytes(event);
      if (rawBody.length > options.rawBody.maxBytes) {
        throw new ApiError(PAYLOAD_TOO_LARGE, { details: { max_bytes: options.rawBody.maxBytes } });
      }
    } else if (options.body) {
      const parsed = parseJsonBody(event, headers, options.maxJsonBytes ?? DEFAULT_MAX_JSON_BYTES);
      const early = options.beforeValidation?.(parsed);
      if (early) return 'raw' in early ? early.raw : successResponse(early.status ?? 200, early.data, state.meta, early.headers);
      body = validate(options.body, parsed, 'body', options.validationError);
    }
    const query = options.query ? validate(options.query, event.queryStringParameters ?? {}, 'query') : undefined;

    const proto = headers['x-forwarded-proto'] ?? 'https';
    const ctx: HandlerContext<Infer<BS>, Infer<QS>> = {
      event,
      requestId: state.meta.request_id,
      traceId: state.meta.trace_id,
      log: state.log,
      headers,
      params,
      query: query as Infer<QS>,
      body: body as Infer<BS>,
      rawBody,
      principal,
      team,
      authorizeTeam: async (idOrSlug) => {
        if (!principal || rule.kind !== 'team') throw new Error(`Route ${key} has no team rule`);
        const access = await authorizeTeam(principal, rule.minRole, idOrSlug);
        withTeamInLog(state, access.team.id);
        return access;
      },
      sourceIp: event.requestContext?.http?.sourceIp ?? '',
      baseUrl: `${proto}://${event.requestContext?.domainName ?? headers.host ?? 'localhost'}`,
    };
    const result = await impl(ctx);
    if ('raw' in result) return result.raw;
    return successResponse(result.status ?? 200, result.data, state.meta, result.headers);
  };

  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>({
    timeoutEarlyInMillis: RUN_OUT_MARGIN_MS,
    timeoutEarlyResponse: () => {
      throw new RouteOutOfTime();
    },
  })
    .use(corsMiddleware())
    .use(envelopeMiddleware(key))
    .handler(core);
}

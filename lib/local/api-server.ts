import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { config, type PlatformEnv } from '../config.ts';
import { errorResponse, meta } from '../envelope.ts';
import type { ErrorEntry } from '../errors/api-error.ts';
import { INTERNAL_ERROR, PAYLOAD_TOO_LARGE, PLATFORM_STARTING } from '../errors/catalogue/request.ts';
import { logger } from '../logger.ts';
import { fallbackRoute, matchRoute, routeKey } from '../http/routes.ts';
import { traceIdFrom } from '../trace.ts';
import type { StreamingAnswer } from '../http/streaming.ts';
import { API_GATEWAY_MAX_BODY_BYTES, lambdaContext, toApiGatewayEvent, writeResult } from './api-event.ts';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const loaded = new Map<string, Promise<LambdaHandler>>();

/** Imports a handler file of the route table once, as Lambda would load its bundle once per container. */
export function loadHandler(file: string): Promise<LambdaHandler> {
  let handler = loaded.get(file);
  if (!handler) {
    handler = import(pathToFileURL(join(repoRoot, file)).href).then((mod: { handler?: LambdaHandler }) => {
      if (typeof mod.handler !== 'function') throw new Error(`${file} exports no handler`);
      return mod.handler;
    });
    loaded.set(file, handler);
  }
  return handler;
}

/**
 * A handler for requests on other hostnames (sites, functions); returns false
 * to pass, at once when the hostname is not one of its own (no promise and no
 * turn for each handler a request passes). It runs before the API reads the
 * body: each reads (and bounds) its own, as CloudFront and the function door do
 * in the cloud.
 */
export type HostnameHandler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) tooLarge = true;
    if (!tooLarge) chunks.push(chunk as Buffer);
  }
  return tooLarge ? null : Buffer.concat(chunks);
}

function writeEnvelopeError(res: ServerResponse, entry: ErrorEntry, headers: Record<string, string> = {}) {
  writeResult(
    res,
    errorResponse(
      entry.status,
      { code: entry.code, error: entry.message, details: null },
      meta(crypto.randomUUID(), traceIdFrom(undefined)),
      headers,
    ),
  );
}

/**
 * API Gateway answers CORS preflights itself from the API's CORS settings;
 * this does the same from the same configuration.
 */
function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  const headers: Record<string, string> = { vary: 'Origin' };
  if (origin && config.corsOrigins().includes(origin)) {
    headers['access-control-allow-origin'] = origin;
    headers['access-control-allow-credentials'] = 'true';
    headers['access-control-allow-methods'] = 'GET, POST, PUT, PATCH, DELETE';
    headers['access-control-allow-headers'] =
      req.headers['access-control-request-headers'] ??
      'authorization, content-type, idempotency-key, x-team-id, x-platform-client, traceparent';
    headers['access-control-max-age'] = '600';
  }
  res.writeHead(204, headers);
  res.end();
}

export async function dispatchApiRequest(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://local');
  const method = (req.method ?? 'GET').toUpperCase();
  const match = matchRoute(method, url.pathname);
  const file = match.row ? match.row.handler : fallbackRoute.handler;
  const key = match.row ? routeKey(match.row) : '$default';
  const event = toApiGatewayEvent(req, body, { routeKey: key, pathParameters: match.row ? match.params : undefined });
  if (match.row && 'streaming' in match.row && match.row.streaming) return answerStreaming(file, event, match.row.timeoutSeconds, res);
  const handler = await loadHandler(file);
  const result = await handler(event, lambdaContext(file, event.requestContext.requestId, match.row?.timeoutSeconds ?? 10));
  writeResult(res, result);
}

/**
 * A streaming route (lib/http/streaming.ts): its `answer` writes to the connection as the cloud's
 * response-streaming function URL would, until it ends or the caller goes away.
 */
async function answerStreaming(file: string, event: APIGatewayProxyEventV2, timeoutSeconds: number | undefined, res: ServerResponse) {
  const mod = (await import(pathToFileURL(join(repoRoot, file)).href)) as { answer?: StreamingAnswer };
  if (typeof mod.answer !== 'function') throw new Error(`${file} exports no answer (a streaming route)`);
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  await mod.answer(
    event,
    lambdaContext(file, event.requestContext.requestId, timeoutSeconds ?? 10),
    (head) => {
      const headers: Record<string, string | string[]> = { ...head.headers };
      if (head.cookies.length > 0) headers['set-cookie'] = head.cookies;
      res.writeHead(head.statusCode, headers);
      // The head leaves now: a tail's client sees the stream open before its first event.
      res.flushHeaders();
      return res;
    },
    gone.signal,
  );
}

/** How the API answers a request once its body is read: the route table here, the template's routes in the synthesized mode. */
export type ApiAnswer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>;

const sourceApi: ApiAnswer = async (req, res, body) => {
  if ((req.method ?? '').toUpperCase() === 'OPTIONS') return answerPreflight(req, res);
  await dispatchApiRequest(req, res, body);
};

/** Answers a request as API Gateway and the route's Lambda would: body limit, then preflight or dispatch. */
export async function answerApiRequest(req: IncomingMessage, res: ServerResponse, api: ApiAnswer = sourceApi): Promise<void> {
  const body = await readBody(req, API_GATEWAY_MAX_BODY_BYTES);
  if (body === null) return writeEnvelopeError(res, PAYLOAD_TOO_LARGE);
  await api(req, res, body);
}

/**
 * Whether the platform has finished starting. The server listens before its resources are provisioned (the
 * port is part of the configuration it sets), so until then every request, on every hostname, answers 503
 * with Retry-After: nothing is answered from half-set configuration, and nothing reads it early.
 */
export interface StartGate {
  ready: boolean;
}

/** Seconds a caller is asked to wait while the platform starts (provisioning takes a few). */
const STARTING_RETRY_AFTER_SECONDS = 1;

export function createApiServer(
  hostnameHandlers: HostnameHandler[] = [],
  gate: StartGate = { ready: true },
  api: () => ApiAnswer = () => sourceApi,
  /** The platform each request is a call of (lib/config.ts): its configuration and caches. */
  platform?: PlatformEnv,
): Server {
  return createServer((req, res) => {
    const answer = async () => {
      try {
        if (!gate.ready) {
          req.resume();
          return writeEnvelopeError(res, PLATFORM_STARTING, { 'retry-after': String(STARTING_RETRY_AFTER_SECONDS) });
        }
        for (const hostnameHandler of hostnameHandlers) {
          const handled = hostnameHandler(req, res);
          if (handled === true || (handled !== false && (await handled))) return;
        }
        await answerApiRequest(req, res, api());
      } catch (error) {
        // A handler crashing outside its pipeline: API Gateway would answer 500 too.
        logger.error('local API server error', error as Error);
        if (!res.headersSent) writeEnvelopeError(res, INTERNAL_ERROR);
        else res.destroy();
      }
    };
    void (platform ? platform.run(answer) : answer());
  });
}

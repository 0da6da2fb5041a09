import type { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { $ZodType } from 'zod/v4/core';
import { defineHandler, type HandlerContext } from './pipeline.ts';

/**
 * Routes that answer with a stream (a live tail's `text/event-stream`): a row with `streaming: true`. The API
 * Gateway HTTP API buffers a Lambda's reply and ends it at 30 s, so in the cloud such a route is a Lambda with a
 * response-streaming function URL behind the console's distribution (infra/api.ts); the local API server calls
 * its `answer` with the connection. Authentication, the route's access rule, validation and the error envelope
 * are the pipeline's, as for every route: `check` runs in it, and only once it passed does the stream open.
 */

export interface StreamHead {
  statusCode: number;
  headers: Record<string, string>;
  cookies: string[];
}

/** Opens the reply with its head; the body is written to what it returns. Lambda response-stream metadata has this shape. */
export type OpenStream = (head: StreamHead) => Writable;

export type StreamingAnswer = (event: APIGatewayProxyEventV2, context: Context, open: OpenStream, signal: AbortSignal) => Promise<void>;

export function defineStreamingHandler<T, QS extends $ZodType | undefined = undefined>(
  key: string,
  options: { query?: QS; contentType: string },
  check: (ctx: HandlerContext<undefined, QS extends $ZodType ? import('zod/v4/core').output<QS> : undefined>) => Promise<T>,
  run: (checked: T, out: Writable, signal: AbortSignal) => Promise<void>,
): { answer: StreamingAnswer; handler: unknown } {
  const checked = new WeakMap<APIGatewayProxyEventV2, T>();
  const pathPattern = pathPatternOf(key);
  const pipeline = defineHandler(key, { query: options.query } as { query?: QS }, async (ctx) => {
    checked.set(ctx.event, await check(ctx as never));
    return { data: null };
  }) as unknown as (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

  const answer: StreamingAnswer = async (request, context, open, signal) => {
    const event = withPathParameters(request, pathPattern);
    const result = await pipeline(event, context);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
    const value = checked.get(event);
    if (value === undefined || (result.statusCode ?? 200) !== 200) {
      // Refused (the envelope) or an OPTIONS preflight: the pipeline's reply, whole.
      open({ statusCode: result.statusCode ?? 200, headers, cookies: result.cookies ?? [] }).end(result.body ?? '');
      return;
    }
    delete headers['content-length'];
    const out = open({
      statusCode: 200,
      headers: { ...headers, 'content-type': options.contentType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
      cookies: [],
    });
    try {
      await run(value, out, signal);
    } finally {
      if (!out.destroyed) out.end();
    }
  };

  // The Lambda Node runtime provides `awslambda.streamifyResponse`; elsewhere (the local server, tests) `answer` is called.
  const runtime = typeof awslambda !== 'undefined' && typeof awslambda.streamifyResponse === 'function' ? awslambda : null;
  const handler = runtime
    ? runtime.streamifyResponse(async (event: APIGatewayProxyEventV2, responseStream, context) => {
        const gone = new AbortController();
        responseStream.on('close', () => gone.abort());
        responseStream.on('error', () => gone.abort());
        await answer(event, context, (head) => runtime.HttpResponseStream.from(responseStream, { ...head }), gone.signal);
      })
    : async () => {
        throw new Error(`${key} streams its reply: it runs in the Lambda runtime, and the local API server calls its answer`);
      };
  return { answer, handler };
}

/** The route key's path as a pattern whose named groups are its parameters (`{id}` is one path segment). */
function pathPatternOf(key: string): RegExp {
  const path = key.slice(key.indexOf(' ') + 1);
  const source = path
    .split(/(\{\w+\})/)
    .map((part) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      return name ? `(?<${name}>[^/]+)` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`);
}

/**
 * The event with its path parameters. A function URL (the cloud's way to a streaming route) has no route and gives
 * none, as the HTTP API does: they are read from the path by the route key's pattern, decoded as the HTTP API does.
 */
function withPathParameters(event: APIGatewayProxyEventV2, pattern: RegExp): APIGatewayProxyEventV2 {
  if (event.pathParameters) return event;
  const groups = pattern.exec(event.rawPath ?? '')?.groups;
  if (!groups) return event;
  const pathParameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(groups)) {
    try {
      pathParameters[name] = decodeURIComponent(value);
    } catch {
      pathParameters[name] = value;
    }
  }
  return { ...event, pathParameters };
}

import { Buffer } from 'node:buffer';
import type { Writable } from 'node:stream';
import { buildRequest, createContext, invokeHandler, loadHandler, replyHead } from '../../runner/runner.mjs';
import { RUNNER_BOOT_MS_HEADER, RUNNER_COLD_START_HEADER, RUNNER_ERROR_HEADER, RUNNER_INSTANCE_HEADER } from '../../runner/protocol.mjs';
import type { CloudRunnerEvent } from './runner-stream.ts';

/**
 * The entry of every user-function Lambda (its package's index.mjs, built by esbuild with the runner's core
 * left to the layer at /opt/runner.mjs: lambda-package.ts). Init loads the bundle; each invocation builds the
 * Request, calls the handler through the runner's core, streams the reply, then stays until the `waitUntil`
 * promises settle (the caller already has the whole reply; a returned invocation would freeze them).
 */

/** The Lambda Node.js runtime's global for response streaming. */
declare const awslambda: {
  streamifyResponse(
    handler: (event: CloudRunnerEvent, responseStream: Writable) => Promise<void>,
  ): (event: CloudRunnerEvent, responseStream: Writable) => Promise<void>;
  HttpResponseStream: {
    from(stream: Writable, metadata: { statusCode: number; headers: Record<string, string>; cookies: string[] }): Writable;
  };
};

// Taken before the function's bundle loads: what user code does to the global cannot touch the platform's read.
const platformFetch = globalThis.fetch;

/** A staged request body (body-staging.ts), as a stream from its presigned URL; an unreadable one fails the invocation. */
async function stagedBody(url: string): Promise<ReadableStream<Uint8Array>> {
  const res = await platformFetch(url);
  if (!res.ok || !res.body) throw new Error(`the staged request body could not be read (S3 answered ${res.status})`);
  return res.body;
}

const booting = Date.now();
const loading = loadHandler(new URL('./function.mjs', import.meta.url).pathname);
loading.catch(() => {});
const instance = process.env.AWS_LAMBDA_LOG_STREAM_NAME || process.env.AWS_LAMBDA_FUNCTION_NAME || '';
let cold = true;
let bootMs = 0;

/** The reply's headers as the prelude carries them: one value per name, each cookie apart, the runner's report added. */
function preludeHeaders(headers: [string, string][], wasCold: boolean): { flat: Record<string, string>; cookies: string[] } {
  const flat: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of headers) {
    if (name === 'set-cookie') cookies.push(value);
    else flat[name] = flat[name] === undefined ? value : flat[name] + ', ' + value;
  }
  flat[RUNNER_COLD_START_HEADER] = String(wasCold);
  if (wasCold) flat[RUNNER_BOOT_MS_HEADER] = String(bootMs);
  flat[RUNNER_INSTANCE_HEADER] = instance;
  return { flat, cookies };
}

export const handler = awslambda.streamifyResponse(async (event, responseStream) => {
  const fn = await loading;
  const wasCold = cold;
  if (cold) bootMs = Date.now() - booting;
  cold = false;
  const { context, pending } = createContext();
  const request = buildRequest({
    method: event.method,
    publicUrl: event.publicUrl,
    query: event.query,
    headers: event.headers,
    body: event.bodyUrl ? await stagedBody(event.bodyUrl) : event.bodyBase64 ? Buffer.from(event.bodyBase64, 'base64') : null,
  });
  const result = await invokeHandler(fn, request, context);
  const { status, headers } = replyHead(result);
  const { flat, cookies } = preludeHeaders(headers, wasCold);
  // The router reads it for the live tail and drops every x-slipway-runner-* header.
  if (result.error) flat[RUNNER_ERROR_HEADER] = JSON.stringify(result.error);
  const out = awslambda.HttpResponseStream.from(responseStream, { statusCode: status, headers: flat, cookies });
  const body = result.outcome === 'response' && event.method !== 'HEAD' ? result.response!.body : null;
  if (body) {
    for await (const chunk of body) {
      if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
    }
  }
  out.end();
  await Promise.allSettled([...pending]);
});

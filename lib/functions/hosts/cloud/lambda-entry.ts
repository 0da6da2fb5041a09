import { Buffer } from 'node:buffer';
import type { Writable } from 'node:stream';
import { format } from 'node:util';
import type { ConsoleLine } from '../../host.ts';
import { buildRequest, createContext, invokeHandler, loadHandler, replyHead } from '../../runner/runner.mjs';
import {
  RUNNER_BOOT_MS_HEADER,
  RUNNER_COLD_START_HEADER,
  RUNNER_ERROR_HEADER,
  RUNNER_INSTANCE_HEADER,
  tailedBodyEnd,
  tailedBodyPiece,
} from '../../runner/protocol.mjs';
import type { CloudRunnerEvent } from './runner-stream.ts';

/**
 * The entry of every user-function Lambda (its package's index.mjs, built by esbuild with the runner's core
 * left to the layer at /opt/runner.mjs: lambda-package.ts). Init loads the bundle; each invocation builds the
 * Request, calls the handler through the runner's core, streams the reply, then stays until the `waitUntil`
 * promises settle (the caller already has the whole reply; a returned invocation would freeze them).
 * A call a live tail watches (`event.tail`) also sends its console lines after its body (runner-stream.ts).
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

/**
 * The console lines of a watched call. Lambda's runtime writes console output to the function's log itself,
 * not through process.stdout, so both the console's methods and the process's streams are wrapped, once and
 * before the function's bundle loads (a method the bundle keeps a reference to is the wrapped one). While no
 * call is watched a write costs one check; a console method's own write to stdout (outside Lambda) counts once.
 */
const TAIL_MAX_LINES = 1000;
const TAIL_MAX_BYTES = 256 * 1024;
/** A very long line is cut, as the local host cuts it. */
const TAIL_LINE_CHARS = 16 * 1024;
let gathered: ConsoleLine[] | null = null;
let gatheredBytes = 0;
let dropped = 0;
let inConsoleMethod = false;

function gather(stream: ConsoleLine['stream'], text: string): void {
  if (!gathered || text === '') return;
  const at = new Date().toISOString();
  for (const line of text.replace(/\r?\n$/, '').split(/\r?\n/)) {
    gatheredBytes += line.length + 48;
    if (gathered.length >= TAIL_MAX_LINES || gatheredBytes > TAIL_MAX_BYTES) dropped += 1;
    else gathered.push({ at, stream, line: line.slice(0, TAIL_LINE_CHARS) });
  }
}

for (const [method, stream] of [
  ['log', 'stdout'],
  ['info', 'stdout'],
  ['debug', 'stdout'],
  ['warn', 'stderr'],
  ['error', 'stderr'],
  ['trace', 'stderr'],
] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    if (!gathered) return original(...args);
    gather(stream, method === 'trace' ? `Trace: ${format(...args)}` : format(...args));
    inConsoleMethod = true;
    try {
      return original(...args);
    } finally {
      inConsoleMethod = false;
    }
  };
}
for (const [out, stream] of [
  [process.stdout, 'stdout'],
  [process.stderr, 'stderr'],
] as const) {
  const original = out.write.bind(out) as (...args: unknown[]) => boolean;
  out.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (gathered && !inConsoleMethod) gather(stream, typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    return original(chunk, ...rest);
  }) as typeof out.write;
}

/** The watched call's lines, gathering stopped; a last line says how many more there were. */
function gatheredLines(): ConsoleLine[] {
  const lines = gathered ?? [];
  if (dropped > 0)
    lines.push({
      at: new Date().toISOString(),
      stream: 'stderr',
      line: `[platform] ${dropped} more console lines were not sent to the tail`,
    });
  gathered = null;
  return lines;
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
  const watched = event.tail === true;
  // Each call starts afresh: one that failed before its end left nothing to gather into.
  gathered = watched ? [] : null;
  gatheredBytes = 0;
  dropped = 0;
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
      if (!out.write(watched ? tailedBodyPiece(chunk) : chunk)) await new Promise((resolve) => out.once('drain', resolve));
    }
  }
  // Lines printed after the body (waitUntil work) are not the tail's: the door has the call's end by then.
  if (watched) out.write(tailedBodyEnd(gatheredLines()));
  out.end();
  await Promise.allSettled([...pending]);
});

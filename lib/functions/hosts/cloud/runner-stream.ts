import { PassThrough, type Readable } from 'node:stream';
import type { InvokeWithResponseStreamResponseEvent } from '@aws-sdk/client-lambda';
import { FunctionHostError, type ConsoleLine, type DoorOutcome, type DoorReply } from '../../host.ts';
import {
  OUTCOME_HEADER,
  RUNNER_BOOT_MS_HEADER,
  RUNNER_COLD_START_HEADER,
  RUNNER_ERROR_HEADER,
  RUNNER_INSTANCE_HEADER,
  TAILED_LENGTH_BYTES,
} from '../../runner/protocol.mjs';

/**
 * The router <-> user-function Lambda exchange: the event the door hands the Lambda entry (lambda-entry.ts) and
 * the streamed reply it reads back, the prelude JSON, eight NUL bytes, then the body (the layout of the Lambda
 * runtime's `HttpResponseStream`), with the runner's report in `x-slipway-runner-*` headers of the prelude.
 *
 * A call a live tail watches (`tail` in the event) has its body framed so that the call's console lines can
 * follow it (protocol.mjs, tailedBodyPiece and tailedBodyEnd). Only a watched call pays for it.
 */

/**
 * What the door hands the runner's Lambda mode. The body is base64 in the
 * JSON payload, so the 6 MB invoke limit holds about 4.4 MiB of body; a larger
 * one is staged in S3 and `bodyUrl` is a presigned GET of it (body-staging.ts).
 */
export interface CloudRunnerEvent {
  method: string;
  /** The function's public URL; with `query` it is the handler's `request.url`. */
  publicUrl: string;
  /** The caller's query string without `?`. */
  query: string;
  headers: [string, string][];
  bodyBase64: string | null;
  /** Where the Lambda reads a staged body; then `bodyBase64` is null. */
  bodyUrl?: string;
  /** A live tail watches the function: the entry gathers this call's console lines and frames the body (above). */
  tail?: boolean;
}

/** The pieces of a framed body, taken as bytes arrive in chunks of any size; `trailer` holds what came after its end. */
function frameReader() {
  let header = Buffer.alloc(0);
  let left = 0;
  let trailer: Buffer[] | null = null;
  return {
    /** The body bytes in `data`. */
    take(data: Buffer): Buffer[] {
      const pieces: Buffer[] = [];
      let at = 0;
      while (at < data.length) {
        if (trailer) {
          trailer.push(data.subarray(at));
          break;
        }
        if (left > 0) {
          const piece = data.subarray(at, at + left);
          pieces.push(piece);
          left -= piece.length;
          at += piece.length;
          continue;
        }
        const part = data.subarray(at, at + TAILED_LENGTH_BYTES - header.length);
        header = Buffer.concat([header, part]);
        at += part.length;
        if (header.length < TAILED_LENGTH_BYTES) break;
        left = header.readUInt32BE(0);
        header = Buffer.alloc(0);
        if (left === 0) trailer = [];
      }
      return pieces;
    },
    /** The console lines after the body's end; none when the stream ended before it, or they do not read. */
    lines(): ConsoleLine[] {
      if (!trailer) return [];
      try {
        const value = JSON.parse(Buffer.concat(trailer).toString('utf8')) as unknown;
        if (!Array.isArray(value)) return [];
        return value.filter(
          (l): l is ConsoleLine =>
            typeof l?.at === 'string' && (l.stream === 'stdout' || l.stream === 'stderr') && typeof l.line === 'string',
        );
      } catch {
        return [];
      }
    },
  };
}

/** Between the prelude and the body. */
const PRELUDE_DELIMITER = Buffer.alloc(8);

export interface RunnerPrelude {
  statusCode: number;
  headers: Record<string, string>;
  cookies: string[];
}

/**
 * Splits a streamed reply into its prelude and its body: resolves with the
 * prelude once the eight NUL bytes after it have arrived; the body stream then
 * carries the rest. A stream that ends or fails before the prelude rejects.
 * `framed` (a watched call): the body is read from its frames, and `console`
 * holds the call's lines before the body ends.
 */
export function decodeRunnerStream(
  chunks: AsyncIterable<Uint8Array>,
  options: { framed?: boolean } = {},
): Promise<{ prelude: RunnerPrelude; body: Readable; console: ConsoleLine[] }> {
  return new Promise((resolve, reject) => {
    const body = new PassThrough();
    const consoleLines: ConsoleLine[] = [];
    const frames = options.framed ? frameReader() : null;
    let head: Buffer | null = Buffer.alloc(0);
    const fail = (error: Error) => {
      if (head) reject(error);
      else body.destroy(error);
    };
    const pass = async (data: Buffer) => {
      for (const piece of frames ? frames.take(data) : [data]) {
        if (!body.write(piece)) await new Promise((done) => body.once('drain', done));
      }
    };
    void (async () => {
      for await (const chunk of chunks) {
        if (!head) {
          await pass(Buffer.from(chunk));
          continue;
        }
        head = Buffer.concat([head, chunk]);
        const at = head.indexOf(PRELUDE_DELIMITER);
        if (at < 0) continue;
        let prelude: RunnerPrelude;
        try {
          prelude = parsePrelude(head.subarray(0, at));
        } catch (error) {
          return fail(error as Error);
        }
        const rest = head.subarray(at + PRELUDE_DELIMITER.length);
        head = null;
        resolve({ prelude, body, console: consoleLines });
        if (rest.length > 0) await pass(rest);
      }
      if (head) fail(new FunctionHostError('instance_crashed', 'the function ended before it sent a status'));
      else {
        // The lines are in before the body ends: the door publishes them once it has passed the body on.
        if (frames) consoleLines.push(...frames.lines());
        body.end();
      }
    })().catch(fail);
  });
}

function parsePrelude(bytes: Buffer): RunnerPrelude {
  const value = JSON.parse(bytes.toString('utf8')) as Partial<RunnerPrelude>;
  if (typeof value.statusCode !== 'number' || !Number.isInteger(value.statusCode))
    throw new FunctionHostError('instance_crashed', 'the runner sent no status');
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(value.headers ?? {})) headers[name.toLowerCase()] = String(raw);
  return { statusCode: value.statusCode, headers, cookies: Array.isArray(value.cookies) ? value.cookies.map(String) : [] };
}

const OUTCOMES: readonly DoorOutcome[] = ['response', 'handler_error', 'invalid_response'];

/** The door's view of the runner's reply: header pairs (each cookie its own `set-cookie`), the outcome and the cold-start report. */
export function doorReplyFromPrelude(
  prelude: RunnerPrelude,
  body: Readable,
  fallbackInstance: string,
  waitedForCreation: boolean,
): DoorReply {
  const reported = prelude.headers[OUTCOME_HEADER];
  // A reply without the runner's report did not come from the runner: treat it as a failed handler.
  const outcome: DoorOutcome = OUTCOMES.includes(reported as DoorOutcome) ? (reported as DoorOutcome) : 'handler_error';
  const headers: [string, string][] = Object.entries(prelude.headers).filter(([name]) => !name.startsWith('x-slipway-runner-'));
  for (const cookie of prelude.cookies) headers.push(['set-cookie', cookie]);
  const bootMs = Number(prelude.headers[RUNNER_BOOT_MS_HEADER]);
  const coldStart = waitedForCreation || prelude.headers[RUNNER_COLD_START_HEADER] === 'true';
  return {
    outcome,
    status: prelude.statusCode,
    headers,
    body,
    coldStart,
    ...(coldStart && Number.isFinite(bootMs) ? { bootMs } : {}),
    instanceId: prelude.headers[RUNNER_INSTANCE_HEADER] || fallbackInstance,
    ...errorOf(outcome, prelude.headers[RUNNER_ERROR_HEADER]),
  };
}

/** The handler's thrown error as the entry reported it (the live tail shows it); nothing when absent or malformed. */
function errorOf(outcome: DoorOutcome, reported: string | undefined): Pick<DoorReply, 'error'> {
  if (outcome !== 'handler_error' || !reported) return {};
  try {
    const parsed = JSON.parse(reported) as { message?: unknown; stack?: unknown };
    return { error: { message: String(parsed.message ?? ''), stack: String(parsed.stack ?? '') } };
  } catch {
    return {};
  }
}

/** An `InvokeComplete` error code as the door's failure kind. */
export function hostFailureOf(errorCode: string | undefined): FunctionHostError {
  return /memory/i.test(errorCode ?? '')
    ? new FunctionHostError('out_of_memory', 'the function ran out of memory')
    : new FunctionHostError('instance_crashed', `the function failed (${errorCode ?? 'unknown'})`);
}

/** The payload chunks of an InvokeWithResponseStream reply; an error reported by Lambda ends it with a host failure. */
export async function* payloadOf(events: AsyncIterable<InvokeWithResponseStreamResponseEvent>): AsyncIterable<Uint8Array> {
  for await (const event of events) {
    if (event.PayloadChunk?.Payload) yield event.PayloadChunk.Payload;
    else if (event.InvokeComplete?.ErrorCode) throw hostFailureOf(event.InvokeComplete.ErrorCode);
  }
}

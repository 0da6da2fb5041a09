// Types of what the TypeScript side imports from runner.mjs (plain JavaScript): the runner's core, which the
// Lambda entry (lib/functions/hosts/cloud/lambda-entry.ts) drives. The framing is protocol.mjs.
import type { Readable } from 'node:stream';

export declare const OUTCOME_HEADER: 'x-slipway-runner-outcome';

export interface RunnerHandler {
  shape: string;
  call(request: Request, context: unknown): unknown;
}
export interface RunnerResult {
  outcome: 'response' | 'handler_error' | 'invalid_response';
  response: Response | null;
  /** The thrown error, on handler_error (the live tail shows it). */
  error?: ErrorReport;
}
export interface ErrorReport {
  message: string;
  stack: string;
}
export declare function loadHandler(bundlePath: string): Promise<RunnerHandler>;
export declare function buildRequest(input: {
  method: string;
  publicUrl: string;
  query?: string;
  headers: Iterable<[string, string]>;
  body?: Readable | ReadableStream | Uint8Array | null;
  signal?: AbortSignal;
}): Request;
export declare function createContext(options?: { log?: (line: string) => void }): {
  context: { env: Record<string, string>; waitUntil(promise: unknown): void };
  pending: Set<Promise<unknown>>;
};
export declare function invokeHandler(
  handler: RunnerHandler,
  request: Request,
  context: unknown,
  options?: { log?: (line: string) => void },
): Promise<RunnerResult>;
export declare function replyHead(result: RunnerResult): { status: number; headers: [string, string][] };

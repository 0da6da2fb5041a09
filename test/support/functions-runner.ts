import type { Readable } from 'node:stream';

/** The runner's core as its exports declare it (runner.mjs is plain JavaScript without type declarations). */
export interface RunnerHandler {
  shape: string;
  call(request: Request, context: unknown): unknown;
}
export interface RunnerResult {
  outcome: 'response' | 'handler_error' | 'invalid_response';
  response: Response | null;
}
export interface RunnerCore {
  OUTCOME_HEADER: string;
  resolveHandler(mod: unknown): RunnerHandler | null;
  buildRequest(input: {
    method: string;
    publicUrl: string;
    query?: string;
    headers: Iterable<[string, string]>;
    body?: Readable | Uint8Array | null;
  }): Request;
  createContext(options?: { log?: (line: string) => void }): {
    context: { env: Record<string, string>; waitUntil(promise: unknown): void };
    pending: Set<Promise<void>>;
  };
  invokeHandler(
    handler: RunnerHandler,
    request: Request,
    context: unknown,
    options?: { log?: (line: string) => void },
  ): Promise<RunnerResult>;
  replyHead(result: RunnerResult): { status: number; headers: [string, string][] };
  collectReply(
    result: RunnerResult,
    options?: { method?: string },
  ): Promise<{ status: number; headers: [string, string][]; body: string; outcome: string }>;
}

const RUNNER = '../../lib/functions/runner/runner.mjs';

export const loadRunner = async () => (await import(RUNNER)) as RunnerCore;

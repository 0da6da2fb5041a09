import type { paths } from './api-types.ts';

/**
 * The console's one way to the platform: `/api/v1` on its own origin, the
 * session in the HttpOnly cookie the browser sends by itself (never read by
 * script), the current team in `X-Team-Id`. Every failure becomes an
 * ApiProblem whose `message` is a sentence for a person and whose `fields`
 * maps each failing input to its own sentence.
 */
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type DataOf<R> = R extends { content: { 'application/json': { data: infer D } } } ? D : never;

/**
 * The `data` of a route's success reply, from the API types generated from docs/openapi.json:
 * `Reply<'/api/v1/projects', 'get'>`. Pages name their replies so, never by a shape of their own.
 */
export type Reply<P extends keyof paths, M extends Method> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer OK }
    ? DataOf<OK>
    : R extends { 201: infer Created }
      ? DataOf<Created>
      : never
  : never;

export interface ApiProblem {
  status: number;
  /** The platform's stable error code, or one of ours: NETWORK_ERROR, UNEXPECTED_REPLY. */
  code: string;
  message: string;
  /** Sentences by input name (`email`, `project.name`, `geo_countries`). */
  fields: Record<string, string>;
  details: unknown;
  /** Seconds the platform asked to wait (429). */
  retryAfter: number | null;
}

export class ApiError extends Error implements ApiProblem {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: Record<string, string> = {},
    readonly details: unknown = null,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface CallOptions {
  body?: unknown;
  /** A multipart or raw body, sent as it is. */
  rawBody?: RequestInit['body'];
  headers?: Record<string, string>;
  /** Team UUID or slug for X-Team-Id; the client's current team when absent. */
  team?: string | null;
  signal?: AbortSignal;
}

type Fetch = (input: string, init: RequestInit) => Promise<Response>;

const FIELD_PREFIX = /^(body|query)\./;

/** details.fields of a VALIDATION_FAILED (and similar) reply, as sentences by input name. */
export function fieldMessages(details: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const fields = (details as { fields?: unknown } | null)?.fields;
  if (!Array.isArray(fields)) return out;
  for (const entry of fields as { field?: unknown; message?: unknown }[]) {
    if (typeof entry?.field !== 'string') continue;
    const name = entry.field.replace(FIELD_PREFIX, '');
    const sentence = typeof entry.message === 'string' && entry.message ? entry.message : 'This value is not accepted.';
    out[name] ??= sentence.endsWith('.') ? sentence : `${sentence}.`;
  }
  return out;
}

function retryAfterOf(response: Response): number | null {
  const value = Number(response.headers.get('retry-after'));
  return Number.isFinite(value) && value > 0 ? value : null;
}

/** A sentence for waiting, added to a 429's own. */
export function waitSentence(seconds: number): string {
  if (seconds < 90) return `Try again in ${Math.ceil(seconds)} seconds.`;
  return `Try again in ${Math.ceil(seconds / 60)} minutes.`;
}

/** Turns any reply that is not a success into an ApiError with a sentence a person can act on. */
export async function problemFrom(response: Response): Promise<ApiError> {
  const retryAfter = retryAfterOf(response);
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: a proxy's page, an empty reply.
  }
  const envelope = body as { code?: unknown; error?: unknown; details?: unknown } | null;
  if (envelope && typeof envelope.code === 'string' && typeof envelope.error === 'string') {
    const message = retryAfter && response.status === 429 ? `${envelope.error} ${waitSentence(retryAfter)}` : envelope.error;
    return new ApiError(response.status, envelope.code, message, fieldMessages(envelope.details), envelope.details ?? null, retryAfter);
  }
  const sentence =
    response.status >= 500
      ? `The platform could not answer (HTTP ${response.status}). Try again in a moment.`
      : `The platform gave an answer the console does not understand (HTTP ${response.status}).`;
  return new ApiError(response.status, 'UNEXPECTED_REPLY', sentence, {}, null, retryAfter);
}

export function createApiClient(options: { fetch?: Fetch; baseUrl?: string; currentTeam?: () => string | null } = {}) {
  const doFetch: Fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const base = options.baseUrl ?? '';

  async function call<T = unknown>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', 'x-platform-client': 'dashboard', ...opts.headers };
    const team = opts.team === undefined ? options.currentTeam?.() : opts.team;
    if (team) headers['x-team-id'] = team;
    let body: RequestInit['body'] = opts.rawBody;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    let response: Response;
    try {
      response = await doFetch(`${base}/api/v1${path}`, { method, headers, body, credentials: 'same-origin', signal: opts.signal });
    } catch (error) {
      if ((error as Error)?.name === 'AbortError') throw error;
      throw new ApiError(0, 'NETWORK_ERROR', 'The platform could not be reached. Check your connection and try again.');
    }
    if (!response.ok) throw await problemFrom(response);
    if (response.status === 204) return undefined as T;
    const envelope = (await response.json().catch(() => null)) as { data?: T } | null;
    if (!envelope || !('data' in envelope)) throw new ApiError(response.status, 'UNEXPECTED_REPLY', 'The platform answered without data.');
    return envelope.data as T;
  }

  return {
    call,
    get: <T = unknown>(path: string, opts?: CallOptions) => call<T>('GET', path, opts),
    post: <T = unknown>(path: string, body?: unknown, opts?: CallOptions) => call<T>('POST', path, { ...opts, body: body ?? {} }),
    patch: <T = unknown>(path: string, body: unknown, opts?: CallOptions) => call<T>('PATCH', path, { ...opts, body }),
    put: <T = unknown>(path: string, body: unknown, opts?: CallOptions) => call<T>('PUT', path, { ...opts, body }),
    del: <T = unknown>(path: string, opts?: CallOptions) => call<T>('DELETE', path, opts),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** The sentence to show for anything a call threw. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return 'Something went wrong in the console. Reload the page and try again.';
}

import { httpOpen, httpSend, HttpNetworkError, type HttpAnswer, type HttpBody } from './http.ts';
import { CliError } from './operator-env.ts';
import { defaultRetryPolicy, isRetryableStatus, parseRetryAfter, withRetry, type RetryPolicy } from './retry.ts';
import { cliConfig } from './config.ts';

/** An error answer of the API, shown to the user as `sentence (CODE)`. */
export class ApiCallError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly sentence: string,
    readonly details: unknown,
  ) {
    super(`${sentence} (${code})`);
    this.name = 'ApiCallError';
  }
}

/** No answer at all (refused, reset, DNS): retried, then reported as one sentence. */
export class NetworkError extends CliError {}

export interface CallOptions {
  /** JSON body. */
  json?: unknown;
  /** Raw body, made anew for each attempt (a stream cannot be replayed); it may set headers (a form's content type). */
  body?: () => Promise<{ body: HttpBody; headers?: Record<string, string> }> | { body: HttpBody; headers?: Record<string, string> };
  headers?: Record<string, string>;
  /** Called before each retry, e.g. to undo progress counted for a failed upload. */
  onRetry?: (info: { attempt: number; delayMs: number; error: Error }) => void;
}

function describeNetworkError(error: unknown): string {
  return error instanceof HttpNetworkError ? error.code : (error as Error).message;
}

function toApiCallError(res: HttpAnswer): ApiCallError {
  try {
    const body = JSON.parse(res.text) as { code?: unknown; error?: unknown; details?: unknown };
    if (typeof body.code === 'string' && typeof body.error === 'string') {
      return new ApiCallError(res.status, body.code, body.error, body.details ?? null);
    }
  } catch {
    // not the error envelope (a proxy's page, say)
  }
  return new ApiCallError(res.status, `HTTP_${res.status}`, `The API answered ${res.status} ${res.statusText || ''}`.trim(), null);
}

const retryAfterOf = (res: HttpAnswer) => {
  const value = res.headers['retry-after'];
  return parseRetryAfter(Array.isArray(value) ? value[0] : value, Date.now());
};

/** The user CLI's view of the API: bearer token, JSON envelopes, retries. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
    private readonly policy: RetryPolicy = retryPolicyFromEnv(),
  ) {}

  /** Calls the API and returns the envelope's `data`; throws ApiCallError or NetworkError. */
  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    return withRetry<T>(
      async () => {
        const headers: Record<string, string> = {
          authorization: `Bearer ${this.token}`,
          'x-platform-client': 'cli',
          ...options.headers,
        };
        let body: HttpBody | undefined;
        if (options.json !== undefined) {
          headers['content-type'] = 'application/json';
          body = JSON.stringify(options.json);
        } else if (options.body) {
          const made = await options.body();
          body = made.body;
          Object.assign(headers, made.headers);
        }
        let res: HttpAnswer;
        try {
          res = await httpSend(url, { method, headers, body });
        } catch (error) {
          return { kind: 'network', error: new NetworkError(`Could not reach the API at ${this.baseUrl}: ${describeNetworkError(error)}`) };
        }
        if (res.status >= 200 && res.status < 300) {
          const parsed = res.text ? (JSON.parse(res.text) as { data?: T }) : {};
          return { kind: 'done', value: parsed.data as T };
        }
        const error = toApiCallError(res);
        if (isRetryableStatus(res.status, error.code)) return { kind: 'retryable', error, retryAfterMs: retryAfterOf(res) };
        throw error;
      },
      { policy: this.policy, onRetry: options.onRetry },
    );
  }

  /** Opens a streaming route (a live tail): the response as it comes, or the API's refusal as an ApiCallError. */
  async openStream(path: string): Promise<import('node:http').IncomingMessage> {
    let res;
    try {
      res = await httpOpen(`${this.baseUrl}${path}`, {
        authorization: `Bearer ${this.token}`,
        'x-platform-client': 'cli',
        accept: 'text/event-stream',
      });
    } catch (error) {
      throw new NetworkError(`Could not reach the API at ${this.baseUrl}: ${describeNetworkError(error)}`);
    }
    if (res.statusCode === 200) return res;
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    throw toApiCallError({
      status: res.statusCode ?? 0,
      statusText: res.statusMessage ?? '',
      headers: res.headers,
      text: Buffer.concat(chunks).toString('utf8'),
    });
  }

  /**
   * PUTs a file to a presigned storage URL the API handed out (a large file's
   * upload URL), with the same retries as an API call. No bearer token: the
   * URL's signature is the authorization.
   */
  async putToStorage(url: string, headers: Record<string, string>, body: () => HttpBody): Promise<void> {
    await withRetry<void>(
      async () => {
        let res: HttpAnswer;
        try {
          res = await httpSend(url, { method: 'PUT', headers, body: body() });
        } catch (error) {
          return {
            kind: 'network',
            error: new NetworkError(`Could not reach storage at ${new URL(url).origin}: ${describeNetworkError(error)}`),
          };
        }
        if (res.status >= 200 && res.status < 300) return { kind: 'done', value: undefined };
        const error = new CliError(`Storage refused the upload: HTTP ${res.status} ${res.statusText}`.trim());
        if (isRetryableStatus(res.status)) return { kind: 'retryable', error, retryAfterMs: retryAfterOf(res) };
        throw error;
      },
      { policy: this.policy },
    );
  }
}

/** SLIPWAY_RETRY_BASE_MS / SLIPWAY_RETRY_ATTEMPTS tune the policy (tests keep their waits short). */
export function retryPolicyFromEnv(): RetryPolicy {
  return {
    maxAttempts: Math.max(1, cliConfig.retryAttempts(defaultRetryPolicy.maxAttempts)),
    baseDelayMs: cliConfig.retryBaseMs(defaultRetryPolicy.baseDelayMs),
    maxDelayMs: defaultRetryPolicy.maxDelayMs,
  };
}

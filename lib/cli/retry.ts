/**
 * When and how long the CLI waits before trying an API call again. Pure logic
 * (no clock, no randomness of its own) so it is tested as such.
 *
 * Retried: network errors (no response at all), 408, 429 and every 5xx, and
 * the one 4xx that means "not yet" rather than "no": a 409
 * IDEMPOTENCY_KEY_IN_PROGRESS, sent with Retry-After while an earlier request
 * with the same key is still running (replaying it later returns its result).
 * Never retried: any other 4xx, which would only fail the same way again.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The backoff cap before jitter for the first retry; it doubles per retry. */
  baseDelayMs: number;
  /** No single wait is longer, whatever the backoff or Retry-After says. */
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 6, baseDelayMs: 250, maxDelayMs: 20_000 };

export function isRetryableStatus(status: number, code?: string): boolean {
  return status === 408 || status === 429 || status >= 500 || (status === 409 && code === 'IDEMPOTENCY_KEY_IN_PROGRESS');
}

/**
 * Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3).
 * Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/**
 * The wait before retry number `retry` (1 for the first retry): "full jitter"
 * exponential backoff, a uniform draw in [0, min(max, base * 2^(retry-1))), so
 * many clients that failed together do not come back together. A server's
 * Retry-After is a floor: we never come back sooner than it asked.
 */
export function retryDelayMs(retry: number, policy: RetryPolicy, random: number, retryAfterMs: number | null = null): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  const jittered = Math.floor(random * ceiling);
  if (retryAfterMs !== null) return Math.min(policy.maxDelayMs, Math.max(retryAfterMs, jittered));
  return jittered;
}

export type AttemptOutcome<T> =
  | { kind: 'done'; value: T }
  /** A response that may be retried (408, 429, 5xx), with its Retry-After if any. */
  | { kind: 'retryable'; error: Error; retryAfterMs: number | null }
  /** A network error: no response. */
  | { kind: 'network'; error: Error };

/**
 * Runs `attempt` until it is done, throws (not retryable), or the attempts
 * run out (the last error is thrown).
 */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<AttemptOutcome<T>>,
  options: {
    policy?: RetryPolicy;
    sleep?: (ms: number) => Promise<void>;
    random?: () => number;
    onRetry?: (info: { attempt: number; delayMs: number; error: Error }) => void;
  } = {},
): Promise<T> {
  const policy = options.policy ?? defaultRetryPolicy;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  for (let n = 1; ; n++) {
    const outcome = await attempt(n);
    if (outcome.kind === 'done') return outcome.value;
    if (n >= policy.maxAttempts) throw outcome.error;
    const delayMs = retryDelayMs(n, policy, random(), outcome.kind === 'retryable' ? outcome.retryAfterMs : null);
    options.onRetry?.({ attempt: n, delayMs, error: outcome.error });
    await sleep(delayMs);
  }
}

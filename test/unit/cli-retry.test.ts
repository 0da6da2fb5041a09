import { describe, expect, it } from 'vitest';
import { isRetryableStatus, parseRetryAfter, retryDelayMs, withRetry, type RetryPolicy } from '../../lib/cli/retry.ts';

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000 };

describe('which answers are retried', () => {
  it.each([408, 429, 500, 502, 503, 504, 599])('%i is retried', (status) => expect(isRetryableStatus(status)).toBe(true));
  it.each([400, 401, 403, 404, 405, 409, 413, 415, 422])('%i is not', (status) => expect(isRetryableStatus(status)).toBe(false));
  it('a 409 IDEMPOTENCY_KEY_IN_PROGRESS is retried (the earlier request is still running); other 409s are not', () => {
    expect(isRetryableStatus(409, 'IDEMPOTENCY_KEY_IN_PROGRESS')).toBe(true);
    expect(isRetryableStatus(409, 'SUBDOMAIN_TAKEN')).toBe(false);
    expect(isRetryableStatus(422, 'IDEMPOTENCY_KEY_IN_PROGRESS')).toBe(false);
  });
});

describe('backoff', () => {
  it('full jitter under a doubling ceiling, capped', () => {
    expect(retryDelayMs(1, policy, 0.999)).toBe(99);
    expect(retryDelayMs(2, policy, 0.999)).toBe(199);
    expect(retryDelayMs(3, policy, 0.5)).toBe(200);
    expect(retryDelayMs(10, policy, 0.999)).toBe(999);
    expect(retryDelayMs(1, policy, 0)).toBe(0);
  });

  it('Retry-After is a floor, itself capped by the largest wait', () => {
    expect(retryDelayMs(1, policy, 0.5, 700)).toBe(700);
    expect(retryDelayMs(4, policy, 0.999, 10)).toBe(799);
    expect(retryDelayMs(1, policy, 0.5, 60_000)).toBe(1000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

describe('withRetry', () => {
  const noSleep = { sleep: async () => undefined, random: () => 0.5 };

  it('retries retryable outcomes until done', async () => {
    const waits: number[] = [];
    let calls = 0;
    const value = await withRetry(
      async () => {
        calls++;
        if (calls === 1) return { kind: 'network', error: new Error('reset') };
        if (calls === 2) return { kind: 'retryable', error: new Error('503'), retryAfterMs: null };
        return { kind: 'done', value: 'ok' };
      },
      { policy, sleep: async (ms) => void waits.push(ms), random: () => 0.5 },
    );
    expect(value).toBe('ok');
    expect(calls).toBe(3);
    expect(waits).toEqual([50, 100]);
  });

  it('gives up after maxAttempts with the last error', async () => {
    let calls = 0;
    await expect(
      withRetry(async () => ({ kind: 'retryable', error: new Error(`fail ${++calls}`), retryAfterMs: null }), { policy, ...noSleep }),
    ).rejects.toThrow('fail 4');
    expect(calls).toBe(4);
  });

  it('a thrown error is not retried', async () => {
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw new Error('400');
        },
        { policy, ...noSleep },
      ),
    ).rejects.toThrow('400');
    expect(calls).toBe(1);
  });
});

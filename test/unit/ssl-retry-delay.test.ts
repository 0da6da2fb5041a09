import { describe, expect, it } from 'vitest';
import { retryDelaySeconds } from '../../lib/domains/tls.ts';

describe('SSL retry delays', () => {
  it('start at the base, double each retry, and stop at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelaySeconds(n, 60, 900))).toEqual([60, 120, 240, 480, 900, 900, 900]);
    expect([1, 2, 3].map((n) => retryDelaySeconds(n, 1, 2))).toEqual([1, 2, 2]);
  });

  it('never exceed the 900 s SQS allows as a message delay, whatever the configured cap', () => {
    expect(retryDelaySeconds(20, 60, 5000)).toBe(900);
    expect(retryDelaySeconds(1, 1200, 5000)).toBe(900);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { config } from '../../lib/config.ts';

/**
 * The cloud's values of the knobs the upload tests shorten (FINALIZE_COPY_CHUNK, IDEMPOTENCY_WAIT_MS): the tests
 * that set them prove the mechanism, this one the figures docs/sites.md states.
 */
describe('finalize and Idempotency-Key settings', () => {
  afterEach(() => {
    delete process.env.FINALIZE_COPY_CHUNK;
    delete process.env.IDEMPOTENCY_WAIT_MS;
  });

  it('unset: 500 copies between two looks at the clock, a 20 s budget, a duplicate waits 15 s', () => {
    expect(config.finalizeCopyChunk()).toBe(500);
    expect(config.finalizeBudgetMs()).toBe(20_000);
    expect(config.idempotencyWaitMs()).toBe(15_000);
  });

  it('set: the values given; nonsense keeps the defaults', () => {
    process.env.FINALIZE_COPY_CHUNK = '250';
    process.env.IDEMPOTENCY_WAIT_MS = '500';
    expect(config.finalizeCopyChunk()).toBe(250);
    expect(config.idempotencyWaitMs()).toBe(500);
    process.env.FINALIZE_COPY_CHUNK = '2.5';
    process.env.IDEMPOTENCY_WAIT_MS = 'soon';
    expect(config.finalizeCopyChunk()).toBe(500);
    expect(config.idempotencyWaitMs()).toBe(15_000);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { cachedReads } from '../../lib/functions/route-cache.ts';

/** A read that counts its calls and answers when told. */
function countedRead() {
  const calls: string[] = [];
  const pending: ((value: string) => void)[] = [];
  const read = (key: string) =>
    new Promise<string>((resolve) => {
      calls.push(key);
      pending.push((value) => resolve(value));
    });
  return { read, calls, answer: (value: string) => pending.shift()!(value) };
}

afterEach(() => {
  delete process.env.FUNCTIONS_ROUTE_CACHE_MS;
});

describe('the look-ups the function doors keep per process', () => {
  it('answers from the cache within FUNCTIONS_ROUTE_CACHE_MS, and callers during a read share it', async () => {
    process.env.FUNCTIONS_ROUTE_CACHE_MS = '60000';
    const { read, calls, answer } = countedRead();
    const cached = cachedReads(read);
    const burst = [cached('a'), cached('a'), cached('a')];
    answer('first');
    expect(await Promise.all(burst)).toEqual(['first', 'first', 'first']);
    expect(await cached('a')).toBe('first');
    expect(calls).toEqual(['a']);
    const other = cached('b');
    answer('second');
    expect(await other).toBe('second');
    expect(calls).toEqual(['a', 'b']);
  });

  it('reads again once the time has passed, and every time at 0 (no caller shares a read begun before it asked)', async () => {
    process.env.FUNCTIONS_ROUTE_CACHE_MS = '0';
    const { read, calls, answer } = countedRead();
    const cached = cachedReads(read);
    const first = cached('a');
    const second = cached('a');
    answer('one');
    answer('two');
    expect([await first, await second]).toEqual(['one', 'two']);
    const third = cached('a');
    answer('three');
    expect(await third).toBe('three');
    expect(calls).toEqual(['a', 'a', 'a']);
  });

  it('keeps no failed read', async () => {
    process.env.FUNCTIONS_ROUTE_CACHE_MS = '60000';
    let fail = true;
    const cached = cachedReads(async (key) => {
      if (fail) throw new Error(`no ${key}`);
      return key;
    });
    await expect(cached('a')).rejects.toThrow('no a');
    fail = false;
    expect(await cached('a')).toBe('a');
  });
});

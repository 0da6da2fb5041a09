import { afterEach, describe, expect, it } from 'vitest';
import { config, PlatformEnv, perPlatform, platformEnv, startPlatformEnv } from '../../lib/config.ts';
import { cachedReads } from '../../lib/functions/route-cache.ts';

afterEach(() => {
  delete process.env.SITE_DOMAIN;
  delete process.env.FUNCTIONS_ROUTE_CACHE_MS;
});

describe("a platform's configuration (lib/config.ts PlatformEnv)", () => {
  it('reads what the platform owns, else the process environment at call time', () => {
    const env = new PlatformEnv({ TABLE_NAME: 'table-a', SITE_DOMAIN: 'a.test' });
    process.env.SITE_DOMAIN = 'from-process.test';
    process.env.FUNCTIONS_ROUTE_CACHE_MS = '250';
    expect(env.run(() => [config.tableName(), config.siteDomain(), config.functionsRouteCacheMs()])).toEqual(['table-a', 'a.test', 250]);
    // Outside any platform's call, with none started: the environment.
    expect(config.siteDomain()).toBe('from-process.test');
    env.owned.SITE_DOMAIN = 'retuned.test';
    expect(env.run(() => config.siteDomain())).toBe('retuned.test');
  });

  it('keeps each call with its platform across awaits, and two platforms apart when their calls interleave', async () => {
    const a = new PlatformEnv({ TABLE_NAME: 'table-a' });
    const b = new PlatformEnv({ TABLE_NAME: 'table-b' });
    const readLater = async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return config.tableName();
    };
    expect(await Promise.all([a.run(readLater), b.run(readLater), a.run(readLater)])).toEqual(['table-a', 'table-b', 'table-a']);
  });

  it('outside any call, uses the platform started last that still runs', () => {
    const a = new PlatformEnv({ TABLE_NAME: 'table-a' });
    const b = new PlatformEnv({ TABLE_NAME: 'table-b' });
    const stopA = startPlatformEnv(a);
    const stopB = startPlatformEnv(b);
    expect(config.tableName()).toBe('table-b');
    stopB();
    expect(config.tableName()).toBe('table-a');
    stopA();
    expect(platformEnv()).not.toBe(a);
    expect(() => config.tableName()).toThrow('Configuration variable TABLE_NAME is not set');
  });

  it('holds module state per platform: one cache each, never shared', async () => {
    const a = new PlatformEnv();
    const b = new PlatformEnv();
    const held = perPlatform(() => new Map<string, string>());
    a.run(() => held().set('site', 'A'));
    expect(b.run(() => held().get('site'))).toBeUndefined();
    expect(a.run(() => held().get('site'))).toBe('A');

    process.env.FUNCTIONS_ROUTE_CACHE_MS = '60000';
    const reads: string[] = [];
    const route = cachedReads(async (key) => {
      reads.push(key);
      return `${key} of ${platformEnv() === a ? 'A' : 'B'}`;
    });
    expect(await a.run(() => route('twin'))).toBe('twin of A');
    expect(await b.run(() => route('twin'))).toBe('twin of B');
    expect(await a.run(() => route('twin'))).toBe('twin of A');
    expect(reads).toEqual(['twin', 'twin']);
  });
});

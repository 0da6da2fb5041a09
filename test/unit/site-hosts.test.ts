import { describe, expect, it } from 'vitest';
import { customDomainHost } from '../../lib/sites/hostname.ts';
import { geoBlocked } from '../../lib/sites/serve.ts';

describe('customDomainHost: which Host headers may name a custom domain', () => {
  const host = (h: string | undefined) => customDomainHost(h, 'localhost', 'fn.localhost');

  it('a dotted hostname, in the claim key form: lower case, no port, no trailing dot', () => {
    expect(host('www.example.com')).toBe('www.example.com');
    expect(host('WWW.Example.COM.:3000')).toBe('www.example.com');
    expect(host('xn--bcher-kva.de')).toBe('xn--bcher-kva.de');
  });

  it('never the API, the site or function hosts, an IP address or a malformed name', () => {
    for (const h of [
      undefined,
      '',
      'localhost',
      'localhost:3000',
      'my-site.localhost:3000',
      'hello-my-site.fn.localhost',
      '127.0.0.1:3000',
      '[::1]:3000',
      '10.0.0.1',
      'bad_label.example.com',
      '-x.example.com',
      'a..b.com',
      `${'a'.repeat(64)}.com`,
    ]) {
      expect(host(h)).toBeNull();
    }
    expect(customDomainHost('shop.slipway.site', 'slipway.site', 'fn.slipway.site')).toBeNull();
    expect(customDomainHost('slipway.site', 'slipway.site', 'fn.slipway.site')).toBeNull();
  });
});

describe('geoBlocked: a custom domain rule against the country header', () => {
  const header = 'cloudfront-viewer-country';
  const from = (country?: string) => (country === undefined ? {} : { [header]: country });

  it('off, or no rule, blocks nobody', () => {
    expect(geoBlocked({ geo_mode: 'off', geo_countries: ['US'] }, from('US'), header)).toBe(false);
    expect(geoBlocked({}, from('US'), header)).toBe(false);
  });

  it('allowlist: only the listed countries pass, compared without case; an unknown country does not', () => {
    const rule = { geo_mode: 'allowlist' as const, geo_countries: ['DE', 'fr'] };
    expect(geoBlocked(rule, from('DE'), header)).toBe(false);
    expect(geoBlocked(rule, from(' fr '), header)).toBe(false);
    expect(geoBlocked(rule, from('US'), header)).toBe(true);
    expect(geoBlocked(rule, from(''), header)).toBe(true);
    expect(geoBlocked(rule, from(), header)).toBe(true);
  });

  it('blocklist: only the listed countries are kept out; an unknown country passes', () => {
    const rule = { geo_mode: 'blocklist' as const, geo_countries: ['US'] };
    expect(geoBlocked(rule, from('us'), header)).toBe(true);
    expect(geoBlocked(rule, from('DE'), header)).toBe(false);
    expect(geoBlocked(rule, from(), header)).toBe(false);
  });

  it('reads only the configured header', () => {
    expect(geoBlocked({ geo_mode: 'blocklist', geo_countries: ['US'] }, { 'x-country': 'US' }, header)).toBe(false);
    expect(geoBlocked({ geo_mode: 'blocklist', geo_countries: ['US'] }, { 'x-country': 'US' }, 'x-country')).toBe(true);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { parseCustomHostname } from '../../lib/domains/hostname.ts';

describe('parseCustomHostname', () => {
  afterEach(() => {
    delete process.env.SITE_DOMAIN;
    delete process.env.FUNCTION_DOMAIN;
  });

  it('takes the apex from the public suffix list, not from counting dots', () => {
    expect(parseCustomHostname('example.com')).toEqual({ hostname: 'example.com', isApex: true });
    expect(parseCustomHostname('www.example.com')).toEqual({ hostname: 'www.example.com', isApex: false });
    expect(parseCustomHostname('example.co.uk')).toEqual({ hostname: 'example.co.uk', isApex: true });
    expect(parseCustomHostname('shop.example.co.uk')).toEqual({ hostname: 'shop.example.co.uk', isApex: false });
    expect(parseCustomHostname('example.com.au')).toEqual({ hostname: 'example.com.au', isApex: true });
  });

  it('normalises case, a trailing dot and internationalised names (punycode)', () => {
    expect(parseCustomHostname(' WWW.Example.COM. ')).toEqual({ hostname: 'www.example.com', isApex: false });
    expect(parseCustomHostname('bücher.de')).toEqual({ hostname: 'xn--bcher-kva.de', isApex: true });
    // An internationalised top-level domain is known in its punycode form.
    expect(parseCustomHostname('www.пример.рф')).toEqual({ hostname: 'www.xn--e1afmkfd.xn--p1ai', isApex: false });
  });

  it('refuses what is not a hostname under a public suffix', () => {
    for (const input of [
      'co.uk',
      'com',
      'localhost',
      '192.0.2.1',
      'a..example.com',
      'under_score.example.com',
      'x-.example.com',
      'example.invalidtld',
      `${'a'.repeat(64)}.com`,
      'https://example.com',
    ]) {
      expect(parseCustomHostname(input), input).toEqual({ problem: 'invalid' });
    }
  });

  it("refuses the platform's own site and function domains", () => {
    process.env.SITE_DOMAIN = 'slipway.site';
    process.env.FUNCTION_DOMAIN = 'fn.slipway.site';
    expect(parseCustomHostname('my-site.slipway.site')).toEqual({ problem: 'reserved' });
    expect(parseCustomHostname('slipway.site')).toEqual({ problem: 'reserved' });
    expect(parseCustomHostname('hello-x.fn.slipway.site')).toEqual({ problem: 'reserved' });
    expect(parseCustomHostname('notslipway.site')).toEqual({ hostname: 'notslipway.site', isApex: true });
  });
});

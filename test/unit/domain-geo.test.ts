import { describe, expect, it } from 'vitest';
import { restrictionsXml, withRestrictions } from '../../lib/aws/cloudfront-lite.ts';
import { geoRestrictionOf, isCountryCode, normalizeGeoPolicy } from '../../lib/domains/geo.ts';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return { code: (error as { code: string }).code, details: (error as { details: unknown }).details };
  }
  return null;
};

describe('geo policy rules', () => {
  it('takes the ISO 3166-1 alpha-2 codes in any case and nothing else', () => {
    for (const code of ['DE', 'us', 'Gb', 'AQ', 'SS', 'CW', 'AX']) expect(isCountryCode(code), code).toBe(true);
    for (const code of ['UK', 'EU', 'XK', 'ZZ', 'DEU', '276', 'D', '', ' DE', 'DE ']) expect(isCountryCode(code), code).toBe(false);
  });

  it('upper-cases, deduplicates and sorts; off keeps no countries', () => {
    expect(normalizeGeoPolicy('allowlist', ['us', 'DE', 'de', 'Us'])).toEqual({ geo_mode: 'allowlist', geo_countries: ['DE', 'US'] });
    expect(normalizeGeoPolicy('blocklist', ['kp'])).toEqual({ geo_mode: 'blocklist', geo_countries: ['KP'] });
    expect(normalizeGeoPolicy('off', undefined)).toEqual({ geo_mode: 'off', geo_countries: [] });
    expect(normalizeGeoPolicy('off', ['DE'])).toEqual({ geo_mode: 'off', geo_countries: [] });
  });

  it('refuses bad codes (listing each once, as sent) and an empty allow or block set', () => {
    expect(codeOf(() => normalizeGeoPolicy('allowlist', ['DE', 'zz', 'zz', 'DEU']))).toEqual({
      code: 'GEO_COUNTRY_INVALID',
      details: { invalid: ['zz', 'DEU'] },
    });
    expect(codeOf(() => normalizeGeoPolicy('off', ['Germany']))).toMatchObject({ code: 'GEO_COUNTRY_INVALID' });
    expect(codeOf(() => normalizeGeoPolicy('allowlist', []))).toMatchObject({ code: 'GEO_COUNTRIES_REQUIRED' });
    expect(codeOf(() => normalizeGeoPolicy('blocklist', undefined))).toMatchObject({ code: 'GEO_COUNTRIES_REQUIRED' });
  });

  it("maps modes to CloudFront's restriction types", () => {
    expect(geoRestrictionOf({ geo_mode: 'allowlist', geo_countries: ['DE', 'FR'] })).toEqual({
      restrictionType: 'whitelist',
      locations: ['DE', 'FR'],
    });
    expect(geoRestrictionOf({ geo_mode: 'blocklist', geo_countries: ['RU'] })).toEqual({ restrictionType: 'blacklist', locations: ['RU'] });
    expect(geoRestrictionOf({ geo_mode: 'off', geo_countries: [] })).toEqual({ restrictionType: 'none', locations: [] });
  });

  it('replaces the <Restrictions> element of a DistributionConfig document and nothing else', () => {
    const restrictions = restrictionsXml({ restrictionType: 'whitelist', locations: ['DE', 'FR'] });
    expect(restrictions).toBe(
      '<Restrictions><GeoRestriction><RestrictionType>whitelist</RestrictionType><Quantity>2</Quantity><Items><Location>DE</Location><Location>FR</Location></Items></GeoRestriction></Restrictions>',
    );
    expect(restrictionsXml({ restrictionType: 'none', locations: [] })).toBe(
      '<Restrictions><GeoRestriction><RestrictionType>none</RestrictionType><Quantity>0</Quantity></GeoRestriction></Restrictions>',
    );
    const head =
      '<?xml version="1.0"?><DistributionConfig xmlns="http://cloudfront.amazonaws.com/doc/2020-05-31/"><Comment>a &lt;b&gt;</Comment>';
    const old =
      '<Restrictions><GeoRestriction><RestrictionType>blacklist</RestrictionType><Quantity>1</Quantity><Items><Location>RU</Location></Items></GeoRestriction></Restrictions>';
    const tail = '<WebACLId></WebACLId><HttpVersion>http2</HttpVersion></DistributionConfig>';
    expect(withRestrictions(head + old + tail, restrictions)).toBe(head + restrictions + tail);
    expect(withRestrictions(head + '<Restrictions/>' + tail, restrictions)).toBe(head + restrictions + tail);
    expect(withRestrictions(head + tail, restrictions)).toBe(head + restrictions + tail);
    expect(withRestrictions(head + '</DistributionConfig>', restrictions)).toBe(head + restrictions + '</DistributionConfig>');
  });
});

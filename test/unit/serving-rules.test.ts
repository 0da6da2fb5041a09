import { describe, expect, it } from 'vitest';
import {
  compilePathPattern,
  compileServingRules,
  fillTarget,
  matchPathPattern,
  MAX_SKIPPED_REPORTED,
  redirectLocation,
  servingRulesMatcher,
  servingRulesSummary,
  type PathPattern,
} from '../../lib/sites/serving-rules.ts';
import { requestSegments } from '../../lib/sites/site-paths.ts';

const segments = (path: string) => requestSegments(path)!.segments;
const pattern = (text: string) => compilePathPattern(text) as PathPattern;
const match = (from: string, path: string) => matchPathPattern(pattern(from), segments(path));

/** The first rule for a path: its status and filled target, as serving sees them. */
function redirectFor(text: string, path: string, fileFound = false) {
  const found = servingRulesMatcher(compileServingRules({ redirects: text })).redirect(segments(path), fileFound);
  return found ? `${found.rule.status}${found.rule.force ? '!' : ''} ${found.target}` : null;
}

describe('path patterns', () => {
  it.each([
    ['/about', '/about', {}],
    ['/about', '/about/', {}],
    ['/about/', '/about', {}],
    ['/', '/', {}],
    ['/blog/:slug', '/blog/hello', { slug: 'hello' }],
    ['/:lang/docs/:page', '/en/docs/intro', { lang: 'en', page: 'intro' }],
    ['/blog/*', '/blog/2024/01/post', { splat: '2024/01/post' }],
    ['/blog/*', '/blog', { splat: '' }],
    ['/blog/*', '/blog/', { splat: '' }],
    ['/*', '/', { splat: '' }],
    ['/*', '/a/b', { splat: 'a/b' }],
    ['/blog*', '/blogs/x', { splat: 's/x' }],
    ['/:a/*', '/x/y/z', { a: 'x', splat: 'y/z' }],
    ['/with%20space', '/with%20space', {}],
    ['/caf%C3%A9', '/café', {}],
  ])('%s matches %s', (from, path, params) => {
    expect(match(from, path)).toEqual(params);
  });

  it.each([
    ['/about', '/about/team'],
    ['/about', '/About'],
    ['/blog/:slug', '/blog'],
    ['/blog/:slug', '/blog/a/b'],
    ['/blog/*', '/blogs'],
    ['/blog*', '/'],
    ['/', '/a'],
  ])('%s does not match %s', (from, path) => {
    expect(match(from, path)).toBeNull();
  });

  it.each([
    ['about', 'the path must start with / (rules for another host are not supported)'],
    ['https://example.com/*', 'the path must start with / (rules for another host are not supported)'],
    ['/a*/b', '* may only end the path'],
    ['/a?b=1', 'the path may not have a query or fragment'],
    ['/a//b', 'the path has an empty segment (//)'],
    ['/:1x', ':1x is not a placeholder (:name, letters, digits and _)'],
    ['/:splat', ':splat is what * captures; it is not a placeholder of its own'],
    ['/:a/:a', 'the placeholder :a appears twice'],
    ['/%zz', '%zz is not a valid path segment'],
  ])('%s is not a pattern: %s', (text, reason) => {
    expect(compilePathPattern(text)).toBe(reason);
  });
});

describe('_redirects', () => {
  it('status is 301 when absent; each allowed status and ! are kept', () => {
    const rules = compileServingRules({
      redirects: '/a /b\n/c /d 302\n/e /f 303\n/g /h 307\n/i /j 308\n/k /l 200\n/m /n 404\n/o /p 301!\n/q /r 200!',
    });
    expect(rules.redirects.map((r) => `${r.from} ${r.status}${r.force ? '!' : ''}`)).toEqual([
      '/a 301',
      '/c 302',
      '/e 303',
      '/g 307',
      '/i 308',
      '/k 200',
      '/m 404',
      '/o 301!',
      '/q 200!',
    ]);
    expect(rules.skipped).toEqual([]);
  });

  it('comments and blank lines are ignored; line numbers are 1-based and count them', () => {
    const rules = compileServingRules({ redirects: '# moved pages\n\n  \n/old /new\n\t# indented comment\n/x /y 302 # no\n' });
    expect(rules.redirects.map((r) => [r.line, r.from, r.to])).toEqual([[4, '/old', '/new']]);
    expect(rules.skipped).toEqual([
      { file: '_redirects', line: 6, reason: 'more than three fields: conditions (query, country, language, role) are not supported' },
    ]);
  });

  it('skips lines that are not rules with the reason, never failing', () => {
    const rules = compileServingRules({
      redirects: [
        '/only-one-field',
        '/a /b 418',
        '/a /b 30x',
        '/a /b 301 Country=us',
        'relative /b',
        '/a relative',
        '/a //evil.example/x',
        '/a https://example.com/app 200',
        '/a http://example.com/x 404',
        '/a/*/b /c',
        '/ok /fine 302',
        '/a mailto:x@example.com',
      ].join('\r\n'),
    });
    expect(rules.redirects.map((r) => r.line)).toEqual([11]);
    expect(rules.skipped).toEqual([
      { file: '_redirects', line: 1, reason: 'expected "from to [status][!]"' },
      { file: '_redirects', line: 2, reason: '418 is not a status of a rule (200, 301, 302, 303, 307, 308 or 404, with an optional !)' },
      { file: '_redirects', line: 3, reason: '30x is not a status of a rule (200, 301, 302, 303, 307, 308 or 404, with an optional !)' },
      { file: '_redirects', line: 4, reason: 'more than three fields: conditions (query, country, language, role) are not supported' },
      { file: '_redirects', line: 5, reason: 'from: the path must start with / (rules for another host are not supported)' },
      { file: '_redirects', line: 6, reason: 'to must be a path starting with / or an http:// or https:// URL' },
      { file: '_redirects', line: 7, reason: 'to must be a path starting with / or an http:// or https:// URL' },
      {
        file: '_redirects',
        line: 8,
        reason: 'a 200 rule serves a file of this site (to must start with /); proxying to another origin is not supported',
      },
      {
        file: '_redirects',
        line: 9,
        reason: 'a 404 rule serves a file of this site (to must start with /); proxying to another origin is not supported',
      },
      { file: '_redirects', line: 10, reason: 'from: * may only end the path' },
      { file: '_redirects', line: 12, reason: 'to must be a path starting with / or an http:// or https:// URL' },
    ]);
    expect(rules.skipped_count).toBe(11);
  });

  it('keeps at most 2,000 rules and reports each one beyond', () => {
    const text = Array.from({ length: 2003 }, (_, i) => `/old-${i} /new-${i}`).join('\n');
    const rules = compileServingRules({ redirects: text });
    expect(rules.redirects).toHaveLength(2000);
    expect(rules.redirects.at(-1)!.from).toBe('/old-1999');
    expect(rules.skipped).toEqual([2001, 2002, 2003].map((line) => ({ file: '_redirects', line, reason: 'more than 2,000 rules' })));
    expect(servingRulesSummary(rules)).toEqual({ redirects: 2000, headers: 0, skipped: rules.skipped, skipped_count: 3 });
  });

  it('reports the first 100 skipped lines and counts them all', () => {
    const rules = compileServingRules({ redirects: 'nonsense\n'.repeat(150) });
    expect(rules.skipped).toHaveLength(MAX_SKIPPED_REPORTED);
    expect(rules.skipped_count).toBe(150);
    expect(rules.skipped.at(-1)!.line).toBe(100);
  });

  it('a file over 1 MiB is not read', () => {
    const rules = compileServingRules({ redirects: `/a /b\n${'#'.repeat(1024 * 1024)}` });
    expect(rules.redirects).toEqual([]);
    expect(rules.skipped).toEqual([{ file: '_redirects', line: 1, reason: 'the file is larger than 1 MiB and was not read' }]);
  });

  it('the first matching rule wins', () => {
    const text = '/blog/special /special 302\n/blog/* /news/:splat 301\n/blog/other /never 302';
    expect(redirectFor(text, '/blog/special')).toBe('302 /special');
    expect(redirectFor(text, '/blog/other')).toBe('301 /news/other');
    expect(redirectFor(text, '/elsewhere')).toBeNull();
  });

  it('rules keyed by first segment and wildcard rules keep file order', () => {
    const text = '/:any/x /first 302\n/a/x /second 302\n/* /spa 200\n/a/y /late 302';
    expect(redirectFor(text, '/a/x')).toBe('302 /first');
    expect(redirectFor(text, '/a/y')).toBe('200 /spa');
    expect(redirectFor(text, '/')).toBe('200 /spa');
  });

  it('a trailing slash on the request does not change which rule matches', () => {
    const text = '/about /about-us 301\n/docs/ /documentation 302';
    expect(redirectFor(text, '/about/')).toBe('301 /about-us');
    expect(redirectFor(text, '/about')).toBe('301 /about-us');
    expect(redirectFor(text, '/docs')).toBe('302 /documentation');
    expect(redirectFor(text, '/docs/')).toBe('302 /documentation');
  });

  it('placeholders and the splat fill `to`, percent-encoded', () => {
    const text =
      '/blog/:year/:slug /posts/:slug?year=:year 301\n/files/* https://cdn.example.com/:splat 302\n/u/:name /people/:name/:other';
    expect(redirectFor(text, '/blog/2024/hello')).toBe('301 /posts/hello?year=2024');
    expect(redirectFor(text, '/files/a/b%20c.pdf')).toBe('302 https://cdn.example.com/a/b%20c.pdf');
    expect(redirectFor(text, '/u/ann')).toBe('301 /people/ann/:other');
    expect(fillTarget('/x/:slug', { slug: 'a?b' })).toBe('/x/a%3Fb');
  });

  it('a non-ASCII `to` is percent-encoded for Location', () => {
    expect(redirectFor('/a /über', '/a')).toBe('301 /%C3%BCber');
  });

  it('a file shadows a rule unless it is forced with !', () => {
    const text = '/index.html /shadowed 302\n/about /forced 301!\n/* /index.html 200';
    expect(redirectFor(text, '/index.html', true)).toBeNull();
    expect(redirectFor(text, '/about', true)).toBe('301! /forced');
    expect(redirectFor(text, '/missing', false)).toBe('200 /index.html');
    expect(redirectFor(text, '/index.html', false)).toBe('302 /shadowed');
  });

  it("the request's query joins a redirect's Location unless `to` has its own", () => {
    expect(redirectLocation('/new', 'a=1&b=2')).toBe('/new?a=1&b=2');
    expect(redirectLocation('/new', '')).toBe('/new');
    expect(redirectLocation('/new?ref=old', 'a=1')).toBe('/new?ref=old');
    expect(redirectLocation('https://example.com/x#top', 'a=1')).toBe('https://example.com/x?a=1#top');
  });
});

describe('_headers', () => {
  const headersFor = (text: string, path: string, base: Record<string, string> = {}) => {
    const reply = { ...base };
    servingRulesMatcher(compileServingRules({ headers: text })).applyHeaders(segments(path), reply);
    return reply;
  };

  it('every matching block applies in file order; the same header from two blocks is joined', () => {
    const text = [
      '/*',
      '  X-Frame-Options: DENY',
      '  Link: </style.css>; rel=preload',
      '/assets/*',
      '  Cache-Control: public, max-age=31536000, immutable',
      '  Link: </font.woff2>; rel=preload',
      '/blog/:slug',
      '  X-Robots-Tag: noindex',
    ].join('\n');
    const base = { 'cache-control': 'public, max-age=0, must-revalidate', 'content-type': 'text/css' };
    expect(headersFor(text, '/assets/app.css', base)).toEqual({
      'cache-control': 'public, max-age=31536000, immutable',
      'content-type': 'text/css',
      'x-frame-options': 'DENY',
      link: '</style.css>; rel=preload, </font.woff2>; rel=preload',
    });
    expect(headersFor(text, '/blog/post/', {})).toEqual({
      'x-frame-options': 'DENY',
      link: '</style.css>; rel=preload',
      'x-robots-tag': 'noindex',
    });
  });

  it('the headers the platform owns are skipped and reported, as are lines that are not headers', () => {
    const rules = compileServingRules({
      headers: [
        '  X-Early: 1',
        '/*',
        '  Content-Length: 5',
        '  ETag: "x"',
        '  Set-Cookie: a=1',
        '  Location: /x',
        '  Content-Encoding: gzip',
        '  Transfer-Encoding: chunked',
        '  Content-Range: bytes 0-1/2',
        '  x-scaler-http-cold-start: 0',
        '  no colon here',
        '  Bad Name: x',
        '  ! X-Powered-By',
        '  X-Kept: yes',
        'https://example.com/*',
        '  X-Other-Host: 1',
        '/empty',
        '/x',
        `  X-Bell: a\u0007b`,
        '  X-Ok: 1',
      ].join('\n'),
    });
    expect(rules.headers.map((r) => [r.line, r.path, r.headers])).toEqual([
      [2, '/*', [['x-kept', 'yes']]],
      [18, '/x', [['x-ok', '1']]],
    ]);
    expect(rules.skipped).toEqual([
      { file: '_headers', line: 1, reason: 'a header line comes before any path' },
      { file: '_headers', line: 3, reason: 'Content-Length is set by the platform and cannot be set here' },
      { file: '_headers', line: 4, reason: 'ETag is set by the platform and cannot be set here' },
      { file: '_headers', line: 5, reason: 'Set-Cookie is set by the platform and cannot be set here' },
      { file: '_headers', line: 6, reason: 'Location is set by the platform and cannot be set here' },
      { file: '_headers', line: 7, reason: 'Content-Encoding is set by the platform and cannot be set here' },
      { file: '_headers', line: 8, reason: 'Transfer-Encoding is set by the platform and cannot be set here' },
      { file: '_headers', line: 9, reason: 'Content-Range is set by the platform and cannot be set here' },
      { file: '_headers', line: 10, reason: 'x-scaler-http-cold-start is set by the platform and cannot be set here' },
      { file: '_headers', line: 11, reason: 'expected "Name: value"' },
      { file: '_headers', line: 12, reason: 'Bad Name is not a header name' },
      { file: '_headers', line: 13, reason: 'removing a header (! Name) is not supported' },
      { file: '_headers', line: 15, reason: 'path: the path must start with / (rules for another host are not supported)' },
      { file: '_headers', line: 17, reason: 'no header line (indented "Name: value") follows this path' },
      { file: '_headers', line: 19, reason: 'the value of X-Bell has a character HTTP does not allow' },
    ]);
  });

  it('keeps at most 2,000 blocks', () => {
    const text = Array.from({ length: 2001 }, (_, i) => `/p${i}\n  X-N: ${i}`).join('\n');
    const rules = compileServingRules({ headers: text });
    expect(rules.headers).toHaveLength(2000);
    expect(rules.skipped).toEqual([{ file: '_headers', line: 4001, reason: 'more than 2,000 rules' }]);
  });
});

import { describe, expect, it } from 'vitest';
import { siteSubdomain } from '../../lib/sites/hostname.ts';
import { etagMatches, requestSegments, resolveSitePath } from '../../lib/sites/site-paths.ts';
import { isObjectReference } from '../../lib/sites/storage-keys.ts';

const files = Object.fromEntries(
  ['index.html', 'about.html', 'blog/index.html', 'blog/post.html', 'a.b/index.html', 'v1.2', 'LICENSE'].map((p) => [p, {}]),
);

describe('resolveSitePath', () => {
  it.each([
    ['/', 'index.html'],
    ['', 'index.html'],
    ['/about', 'about.html'],
    ['/blog', 'blog/index.html'],
    ['/blog/', 'blog/index.html'],
    ['/blog/post', 'blog/post.html'],
    ['/v1.2', 'v1.2'],
    ['/LICENSE', 'LICENSE'],
    ['/a.b/', 'a.b/index.html'],
    ['/blog/./post', 'blog/post.html'],
    ['/../../about', 'about.html'],
    // The URL parser treats %2e%2e as a dot segment, as browsers do; it still stops at the root.
    ['/%2e%2e/about', 'about.html'],
  ])('%s -> %s', (path, expected) => expect(resolveSitePath(path, files)).toBe(expected));

  it.each(['/missing', '/about/', '/a.b', '/blog/post/', '/blog/..%2fabout', '/x%5c..', '/%ff'])('%s -> null', (path) =>
    expect(resolveSitePath(path, files)).toBeNull(),
  );
});

describe('requestSegments', () => {
  it('decodes each segment once', () => {
    expect(requestSegments('/a%20b/%25C3')).toEqual({ segments: ['a b', '%C3'], trailingSlash: false });
  });
});

describe('siteSubdomain', () => {
  it.each([
    ['blog.localhost:3000', 'localhost', 'blog'],
    ['Blog.Localhost', 'localhost', 'blog'],
    ['blog.slipway.site', 'slipway.site', 'blog'],
    ['blog.slipway.site.', 'slipway.site', 'blog'],
  ])('%s under %s is %s', (host, domain, label) => expect(siteSubdomain(host, domain)).toBe(label));

  it.each([
    ['localhost:3000', 'localhost'],
    ['x-blog.fn.localhost', 'localhost'],
    ['a.b.slipway.site', 'slipway.site'],
    ['-x.localhost', 'localhost'],
    ['evil.com', 'localhost'],
    [undefined, 'localhost'],
  ])('%s is not a site host under %s', (host, domain) => expect(siteSubdomain(host, domain)).toBeNull());
});

describe('etagMatches', () => {
  const etag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abcd"', false],
    ['', false],
    [undefined, false],
  ])('%s -> %s', (header, expected) => expect(etagMatches(header, etag)).toBe(expected));
});

describe('isObjectReference', () => {
  const id = '123e4567-e89b-42d3-a456-426614174000';
  it.each([`${id}/index.html`, `${id}/a/b.css`, `${id}/.well-known/x`, `${id}/a..b`])('%s is a reference', (ref) =>
    expect(isObjectReference(ref)).toBe(true),
  );
  it.each([
    `${id}/../x`,
    `${id}/a/../../x`,
    `${id}/./x`,
    `${id}/`,
    `${id}`,
    `${id}//x`,
    `${id}/a\\b`,
    'x/index.html',
    `../${id}/x`,
    `${id.toUpperCase()}/x`,
  ])('%s is not', (ref) => expect(isObjectReference(ref)).toBe(false));
});

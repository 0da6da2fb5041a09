/**
 * The serving path rules, free of any I/O: the request path as a manifest path, which file a path serves, and
 * whether a conditional request still holds the served copy.
 */

/**
 * The request path as a manifest path prefix: dot segments resolved the way a
 * URL parser resolves them (`..` never climbs above the root), each segment
 * percent-decoded. Null when a decoded segment hides a separator, a NUL or a
 * dot segment (`%2e%2e`, `..%2f`): such a path names nothing in a deployment.
 * Lookups are only ever made for paths present in the manifest, so nothing
 * outside the deployment folder is reachable whatever this returns.
 */
export function requestSegments(target: string): { segments: string[]; trailingSlash: boolean } | null {
  let pathname: string;
  try {
    pathname = new URL(target.startsWith('/') ? target : `/${target}`, 'http://site.invalid').pathname;
  } catch {
    return null;
  }
  const raw = pathname.split('/').slice(1);
  const trailingSlash = raw.length === 0 || raw[raw.length - 1] === '';
  const segments: string[] = [];
  for (const part of raw) {
    if (part === '') continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return null;
    }
    if (decoded === '.' || decoded === '..' || /[/\\\0]/.test(decoded)) return null;
    segments.push(decoded);
  }
  return { segments, trailingSlash };
}

/**
 * The manifest path a request path is served from, or null for "not found":
 * `/` and `/dir/` serve the folder's index.html; a path whose last segment has
 * no extension serves the file itself if deployed under that name, else
 * `path.html`, else `path/index.html`; any other path serves exactly itself.
 */
export function resolveSitePath(target: string, files: Record<string, unknown> | ((path: string) => boolean)): string | null {
  const parsed = requestSegments(target);
  if (!parsed) return null;
  const { segments, trailingSlash } = parsed;
  const has = typeof files === 'function' ? files : (p: string) => Object.hasOwn(files, p);
  const joined = segments.join('/');
  if (trailingSlash) {
    const index = joined ? `${joined}/index.html` : 'index.html';
    return has(index) ? index : null;
  }
  if (has(joined)) return joined;
  const last = segments[segments.length - 1]!;
  if (!last.includes('.')) {
    if (has(`${joined}.html`)) return `${joined}.html`;
    if (has(`${joined}/index.html`)) return `${joined}/index.html`;
  }
  return null;
}

/** If-None-Match against one strong ETag: `*`, a list, weak forms compared weakly (RFC 9110 13.1.2). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const value = ifNoneMatch.trim();
  if (value === '*') return true;
  return value.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

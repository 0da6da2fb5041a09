import type { Readable } from 'node:stream';

/** The request and reply of the site server, and the replies it makes without a file: errors, 404, 403, 301, 405. */

export interface SiteRequest {
  /** The Host header as the client sent it (port allowed). */
  host: string;
  /** The request target: path and optional query string, still percent-encoded. */
  path: string;
  method: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string | undefined>;
}

export interface SiteReply {
  status: number;
  headers: Record<string, string>;
  /** null for HEAD, 304 and 405; a stream for deployed objects. */
  body: Buffer | Readable | null;
}

/** The serving error codes; they appear in the body and in `x-slipway-error`. */
export type ServeErrorCode = 'slug_mismatch' | 'route_manifest_missing' | 'internal_error';

/** A redirect to the primary domain: the spec's "301 cached at the edge for 30 days". */
const PRIMARY_REDIRECT_CACHE_CONTROL = 'public, max-age=2592000';

const GEO_BLOCKED_PAGE = Buffer.from(
  '<!doctype html>\n<html><head><meta charset="utf-8"><title>403 Forbidden</title></head>' +
    '<body><h1>403 Forbidden</h1><p>This site is not available in your country or region.</p></body></html>\n',
);

const NOT_FOUND_PAGE = Buffer.from(
  '<!doctype html>\n<html><head><meta charset="utf-8"><title>404 Not Found</title></head>' +
    '<body><h1>404 Not Found</h1><p>There is nothing at this address.</p></body></html>\n',
);

function plain(status: number, body: Buffer | string, extra: Record<string, string> = {}, head = false): SiteReply {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return {
    status,
    headers: {
      'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'text/html; charset=utf-8',
      'content-length': String(bytes.length),
      'cache-control': 'no-store',
      ...extra,
    },
    body: head ? null : bytes,
  };
}

export function serveError(code: ServeErrorCode, head: boolean): SiteReply {
  return plain(500, `${code}\n`, { 'x-slipway-error': code }, head);
}

export function notFoundPage(head: boolean): SiteReply {
  return plain(404, NOT_FOUND_PAGE, {}, head);
}

export function geoBlockedPage(head: boolean): SiteReply {
  return plain(403, GEO_BLOCKED_PAGE, {}, head);
}

export function primaryRedirect(location: string, head: boolean): SiteReply {
  return plain(301, `Moved Permanently: ${location}\n`, { location, 'cache-control': PRIMARY_REDIRECT_CACHE_CONTROL }, head);
}

/** A `_redirects` rule's redirect (lib/sites/serving-rules.ts): any method may be sent on. */
export function ruleRedirect(status: number, location: string, cacheControl: string, head: boolean): SiteReply {
  return plain(status, `Redirecting to ${location}\n`, { location, 'cache-control': cacheControl }, head);
}

/** A method the site server does not answer (it serves GET and HEAD). */
export function methodNotAllowed(method: string): SiteReply | null {
  const upper = method.toUpperCase();
  return upper === 'GET' || upper === 'HEAD' ? null : plain(405, 'Method Not Allowed\n', { allow: 'GET, HEAD' });
}

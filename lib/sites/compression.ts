import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip } from 'node:zlib';
import type { SiteReply } from './site-replies.ts';

/**
 * The local site server's compression, as CloudFront compresses in front of the sites in the cloud
 * (infra/site-serving.ts: `compress: true`): a step of its own after the serving rules, applied to their
 * reply. CloudFront's rules (Developer Guide, "Serve compressed files"): the viewer's Accept-Encoding names
 * br or gzip (br preferred); the status is 200, 403 or 404; the type is one it compresses (text types,
 * JavaScript, JSON, XML, SVG, fonts that are not already compressed); the body is 1,000 to 10,000,000
 * bytes; the origin sent no Content-Encoding; a strong ETag becomes weak.
 */
const MIN_BYTES = 1_000;
const MAX_BYTES = 10_000_000;
const COMPRESSED_STATUSES = new Set([200, 403, 404]);

const COMPRESSIBLE_TYPE =
  /^(?:text\/[^;]+|application\/(?:javascript|x-javascript|ecmascript|json|ld\+json|manifest\+json|geo\+json|xml|xhtml\+xml|rss\+xml|atom\+xml|vnd\.ms-fontobject|x-font-ttf|x-font-opentype|wasm)|image\/(?:svg\+xml|x-icon|vnd\.microsoft\.icon)|font\/(?:otf|ttf|eot))\s*(?:;|$)/i;

export type ContentCoding = 'br' | 'gzip';

/** The coding to answer with: br when the request accepts it, else gzip, else none (a q of 0 refuses a coding). */
export function chooseCoding(acceptEncoding: string | undefined): ContentCoding | null {
  if (!acceptEncoding) return null;
  const accepted = new Set<string>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) accepted.add(name);
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return null;
}

export const isCompressibleType = (contentType: string | undefined) => COMPRESSIBLE_TYPE.test(contentType ?? '');

const compressBuffer = { br: promisify(brotliCompress), gzip: promisify(gzip) };
// Brotli's default quality (11) costs seconds on a large file; 5 is about gzip's speed and still smaller.
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

function bodySize(reply: SiteReply): number | null {
  if (Buffer.isBuffer(reply.body)) return reply.body.length;
  const length = Number(reply.headers['content-length']);
  return Number.isFinite(length) ? length : null;
}

/** The reply as CloudFront would send it to a viewer whose Accept-Encoding is `acceptEncoding`. */
export async function compressReply(reply: SiteReply, acceptEncoding: string | undefined): Promise<SiteReply> {
  if (!COMPRESSED_STATUSES.has(reply.status) || !isCompressibleType(reply.headers['content-type'])) return reply;
  // The representation depends on Accept-Encoding: a shared cache must keep one per coding.
  const headers: Record<string, string> = {
    ...reply.headers,
    vary: reply.headers.vary ? `${reply.headers.vary}, Accept-Encoding` : 'Accept-Encoding',
  };
  const coding = chooseCoding(acceptEncoding);
  const size = bodySize(reply);
  const skip =
    coding === null ||
    reply.body === null ||
    headers['content-encoding'] !== undefined ||
    /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(headers['cache-control'] ?? '') ||
    size === null ||
    size < MIN_BYTES ||
    size > MAX_BYTES;
  if (skip) return { ...reply, headers };
  headers['content-encoding'] = coding;
  if (headers.etag && !headers.etag.startsWith('W/')) headers.etag = `W/${headers.etag}`;
  if (Buffer.isBuffer(reply.body)) {
    const body = coding === 'br' ? await compressBuffer.br(reply.body, BROTLI_OPTIONS) : await compressBuffer.gzip(reply.body);
    return { ...reply, headers: { ...headers, 'content-length': String(body.length) }, body };
  }
  delete headers['content-length'];
  const encoder = coding === 'br' ? createBrotliCompress(BROTLI_OPTIONS) : createGzip();
  return { ...reply, headers, body: (reply.body as Readable).pipe(encoder) };
}

import mime from 'mime';

/** Types served as text get an explicit charset: browsers otherwise guess, and guess wrong for UTF-8 without a BOM. */
const TEXT_TYPES = /^(text\/|application\/(javascript|json|xml|manifest\+json|ld\+json)|image\/svg\+xml)/;

/** The Content-Type of a deployed file, from its path's extension. */
export function contentTypeFor(path: string): string {
  const type = mime.getType(path) ?? 'application/octet-stream';
  return TEXT_TYPES.test(type) ? `${type}; charset=utf-8` : type;
}

import mime from 'mime';

/** Types served as text get an explicit charset: browsers otherwise guess, and guess wrong for UTF-8 without a BOM. */
const TEXT_TYPES = /^(text\/|application\/(javascript|json|xml|manifest\+json|ld\+json)|image\/svg\+xml)/;

/**
 * TypeScript and JSX sources: mime's `.ts` is an MPEG transport stream (video/mp2t), which made a deployed
 * `/src/main.ts` play as a video. They are served as the text they are; a browser runs neither anyway.
 */
const SOURCE_TEXT = /\.(?:ts|tsx|mts|cts|jsx)$/i;

function typeOf(path: string): string {
  if (SOURCE_TEXT.test(path)) return 'text/plain; charset=utf-8';
  const type = mime.getType(path) ?? 'application/octet-stream';
  return TEXT_TYPES.test(type) ? `${type}; charset=utf-8` : type;
}

/** Types by extension, for the usual `name.ext`: a publish asks for thousands of paths with a handful of extensions. */
const byExtension = new Map<string, string>();
const MAX_EXTENSIONS_KEPT = 1000;

/** The Content-Type of a deployed file, from its path's extension. */
export function contentTypeFor(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  // `name.ext` (not a dotfile, no backslash, which mime also reads as a separator): mime's answer depends on the extension alone.
  if (dot <= 0 || name.includes('\\')) return typeOf(path);
  const extension = name.slice(dot + 1).toLowerCase();
  let type = byExtension.get(extension);
  if (type === undefined) {
    type = typeOf(path);
    if (byExtension.size >= MAX_EXTENSIONS_KEPT) byExtension.clear();
    byExtension.set(extension, type);
  }
  return type;
}

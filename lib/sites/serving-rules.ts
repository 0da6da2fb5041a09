/**
 * Serving rules: a deployment's `_redirects` and `_headers`, in the format Netlify and Cloudflare Pages share.
 * Free of any I/O, so the publish step, the site server of the local platform, the serve-site Lambda and
 * `slipway dev` all use this one module: `compileServingRules` once at publish (its result goes into the route
 * manifest), `servingRulesMatcher` once per manifest in a process, then only lookups per request.
 */

export const REDIRECTS_FILE = '_redirects';
export const HEADERS_FILE = '_headers';
/** The deployment's paths of the two files: read at publish, never served (they answer 404). */
export const RULES_FILES: ReadonlySet<string> = new Set([REDIRECTS_FILE, HEADERS_FILE]);

/** Cloudflare Pages' limit: more rules are skipped, each reported. Also bounds the per-request work. */
export const MAX_RULES = 2000;
/** A skipped list longer than this keeps its first entries; `skipped_count` still counts them all. */
export const MAX_SKIPPED_REPORTED = 100;
/** A rules file is a few kilobytes; a larger one is not read at all (reported on its line 1). */
export const MAX_RULES_FILE_BYTES = 1024 * 1024;

export type RedirectStatus = 200 | 301 | 302 | 303 | 307 | 308 | 404;
const STATUSES: ReadonlySet<number> = new Set([200, 301, 302, 303, 307, 308, 404]);

/** A path pattern: literal segments (decoded) and `:name` placeholders, then optionally a splat. */
export interface PathPattern {
  /** A string is a literal segment; `{ name }` a placeholder matching one segment. */
  parts: (string | { name: string })[];
  /**
   * null: the path has exactly `parts`. A string: `*` ended the pattern; the text before the `*` in its last
   * segment ('' for a segment that is `*` alone) and everything after it is captured as `splat`.
   */
  splat: string | null;
}

export interface RedirectRule {
  line: number;
  from: string;
  to: string;
  status: RedirectStatus;
  /** `!`: applies even when a file of the deployment answers the path. */
  force: boolean;
  pattern: PathPattern;
}

export interface HeaderRule {
  line: number;
  path: string;
  pattern: PathPattern;
  /** Names lower-cased, in file order. */
  headers: [string, string][];
}

export interface SkippedLine {
  file: typeof REDIRECTS_FILE | typeof HEADERS_FILE;
  /** 1-based. */
  line: number;
  reason: string;
}

/** What the route manifest carries (`serving_rules`): compiled, so serving never parses. */
export interface ServingRules {
  redirects: RedirectRule[];
  headers: HeaderRule[];
  /** The first MAX_SKIPPED_REPORTED lines skipped, in file order (`_redirects` first). */
  skipped: SkippedLine[];
  skipped_count: number;
}

/** What the API reports of a deployment's rules. */
export interface ServingRulesSummary {
  redirects: number;
  headers: number;
  skipped: SkippedLine[];
  skipped_count: number;
}

export const NO_SERVING_RULES: ServingRulesSummary = { redirects: 0, headers: 0, skipped: [], skipped_count: 0 };

export function servingRulesSummary(rules: ServingRules | null | undefined): ServingRulesSummary {
  if (!rules) return NO_SERVING_RULES;
  return { redirects: rules.redirects.length, headers: rules.headers.length, skipped: rules.skipped, skipped_count: rules.skipped_count };
}

/**
 * Headers the platform sets itself: framing, validators and redirects would break if a file replaced them,
 * and the door's `x-scaler-*` and the platform's `x-slipway-*` headers are its own reports.
 */
const OWNED_HEADERS: ReadonlySet<string> = new Set([
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'etag',
  'content-range',
  'set-cookie',
  'location',
  // Hop-by-hop: they describe the connection, which is the server's.
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
]);
const OWNED_PREFIXES = ['x-scaler-', 'x-slipway-'];

export function isOwnedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return OWNED_HEADERS.has(lower) || OWNED_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

const PLACEHOLDER = /^:([A-Za-z_][A-Za-z0-9_]*)$/;
/** RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What Node (and HTTP) accept in a field value: no control character but tab. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A pattern as written (`/blog/:slug`, `/assets/*`), or the reason it is not one. */
export function compilePathPattern(text: string): PathPattern | string {
  if (!text.startsWith('/')) return 'the path must start with / (rules for another host are not supported)';
  const star = text.indexOf('*');
  if (star !== -1 && star !== text.length - 1) return '* may only end the path';
  if (text.includes('?') || text.includes('#')) return 'the path may not have a query or fragment';
  const body = star === -1 ? text : text.slice(0, -1);
  const raw = body.split('/').slice(1);
  // A trailing slash does not change what matches: `/about/` is `/about`. With a splat, the last piece is its prefix.
  const splatPrefix = star === -1 ? null : (raw.pop() ?? '');
  const parts: PathPattern['parts'] = [];
  const names = new Set<string>();
  for (const [index, segment] of raw.entries()) {
    if (segment === '') {
      if (index === raw.length - 1 && splatPrefix === null) continue;
      return 'the path has an empty segment (//)';
    }
    if (segment.startsWith(':')) {
      const name = PLACEHOLDER.exec(segment)?.[1];
      if (!name) return `${segment} is not a placeholder (:name, letters, digits and _)`;
      if (name === 'splat') return ':splat is what * captures; it is not a placeholder of its own';
      if (names.has(name)) return `the placeholder :${name} appears twice`;
      names.add(name);
      parts.push({ name });
      continue;
    }
    const decoded = decodeSegment(segment);
    if (decoded === null) return `${segment} is not a valid path segment`;
    parts.push(decoded);
  }
  let splat: string | null = null;
  if (splatPrefix !== null) {
    const decoded = decodeSegment(splatPrefix);
    if (decoded === null || splatPrefix.startsWith(':')) return `${splatPrefix}* is not a valid path segment`;
    splat = decoded;
  }
  return { parts, splat };
}

function decodeSegment(segment: string): string | null {
  try {
    const decoded = decodeURIComponent(segment);
    return decoded === '.' || decoded === '..' || /[/\\\0]/.test(decoded) ? null : decoded;
  } catch {
    return null;
  }
}

/** The placeholders and splat of a path (decoded segments, no empty ones) that the pattern matches, or null. */
export function matchPathPattern(pattern: PathPattern, segments: readonly string[]): Record<string, string> | null {
  const { parts, splat } = pattern;
  if (splat === null ? segments.length !== parts.length : segments.length < parts.length + (splat === '' ? 0 : 1)) return null;
  let params: Record<string, string> | null = null;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (typeof part === 'string') {
      if (segments[i] !== part) return null;
    } else {
      params ??= {};
      params[part.name] = segments[i]!;
    }
  }
  params ??= {};
  if (splat !== null) {
    const rest = segments.slice(parts.length);
    if (splat !== '') {
      if (!rest[0]!.startsWith(splat)) return null;
      rest[0] = rest[0]!.slice(splat.length);
    }
    params.splat = rest.join('/');
  }
  return params;
}

function lines(text: string): string[] {
  return text.replace(/^\uFEFF/, '').split('\n');
}

function compileRedirects(text: string, skip: (line: number, reason: string) => void): RedirectRule[] {
  const rules: RedirectRule[] = [];
  for (const [index, raw] of lines(text).entries()) {
    const line = index + 1;
    const content = raw.trim();
    if (content === '' || content.startsWith('#')) continue;
    const fields = content.split(/\s+/);
    if (fields.length < 2) {
      skip(line, 'expected "from to [status][!]"');
      continue;
    }
    if (fields.length > 3) {
      skip(line, 'more than three fields: conditions (query, country, language, role) are not supported');
      continue;
    }
    const [from, written, statusText = '301'] = fields as [string, string, string?];
    // What a Location header can carry: a character beyond ASCII (`/über`) percent-encoded, as a browser would.
    const to = written.replace(/[^\x21-\x7e]+/g, (chars) => encodeURI(chars));
    const force = statusText.endsWith('!');
    const digits = force ? statusText.slice(0, -1) : statusText;
    const status = /^\d{3}$/.test(digits) ? Number(digits) : Number.NaN;
    if (!STATUSES.has(status)) {
      skip(line, `${statusText} is not a status of a rule (200, 301, 302, 303, 307, 308 or 404, with an optional !)`);
      continue;
    }
    const pattern = compilePathPattern(from);
    if (typeof pattern === 'string') {
      skip(line, `from: ${pattern}`);
      continue;
    }
    const absolute = /^https?:\/\/[^/?#\s]+/i.test(to);
    if (status === 200 || status === 404) {
      if (!to.startsWith('/') || to.startsWith('//')) {
        skip(line, `a ${status} rule serves a file of this site (to must start with /); proxying to another origin is not supported`);
        continue;
      }
    } else if (!absolute && (!to.startsWith('/') || to.startsWith('//'))) {
      skip(line, 'to must be a path starting with / or an http:// or https:// URL');
      continue;
    }
    if (rules.length >= MAX_RULES) {
      skip(line, `more than ${MAX_RULES.toLocaleString('en-US')} rules`);
      continue;
    }
    rules.push({ line, from, to, status: status as RedirectStatus, force, pattern });
  }
  return rules;
}

function compileHeaders(text: string, skip: (line: number, reason: string) => void): HeaderRule[] {
  const rules: HeaderRule[] = [];
  let block: HeaderRule | null = null;
  /** The block's pattern line was skipped: its header lines go with it, without a report each. */
  let skippingBlock = false;
  const close = () => {
    if (block && block.headers.length === 0) skip(block.line, 'no header line (indented "Name: value") follows this path');
    else if (block) {
      if (rules.length >= MAX_RULES) skip(block.line, `more than ${MAX_RULES.toLocaleString('en-US')} rules`);
      else rules.push(block);
    }
    block = null;
  };
  for (const [index, raw] of lines(text).entries()) {
    const line = index + 1;
    const content = raw.trim();
    if (content === '' || content.startsWith('#')) continue;
    if (!/^\s/.test(raw)) {
      close();
      const pattern = compilePathPattern(content);
      if (typeof pattern === 'string') {
        skip(line, `path: ${pattern}`);
        skippingBlock = true;
      } else {
        block = { line, path: content, pattern, headers: [] };
        skippingBlock = false;
      }
      continue;
    }
    if (skippingBlock) continue;
    const current = block as HeaderRule | null;
    if (!current) {
      skip(line, 'a header line comes before any path');
      continue;
    }
    if (content.startsWith('!')) {
      skip(line, 'removing a header (! Name) is not supported');
      continue;
    }
    const colon = content.indexOf(':');
    if (colon <= 0) {
      skip(line, 'expected "Name: value"');
      continue;
    }
    const name = content.slice(0, colon).trim();
    const value = content.slice(colon + 1).trim();
    if (!HEADER_NAME.test(name)) {
      skip(line, `${name} is not a header name`);
      continue;
    }
    if (isOwnedHeader(name)) {
      skip(line, `${name} is set by the platform and cannot be set here`);
      continue;
    }
    if (!HEADER_VALUE.test(value)) {
      skip(line, `the value of ${name} has a character HTTP does not allow`);
      continue;
    }
    current.headers.push([name.toLowerCase(), value]);
  }
  close();
  return rules;
}

/**
 * The two files' texts (null when the deployment has none), compiled; a line that is not a rule is skipped, never
 * fatal. A file over MAX_RULES_FILE_BYTES is reported and not read: `files` may then hold its size instead of its text.
 */
export function compileServingRules(files: { redirects?: string | number | null; headers?: string | number | null }): ServingRules {
  const skipped: SkippedLine[] = [];
  let count = 0;
  const skipper = (file: SkippedLine['file']) => (line: number, reason: string) => {
    count++;
    if (skipped.length < MAX_SKIPPED_REPORTED) skipped.push({ file, line, reason });
  };
  const tooLarge = (text: string | number, file: SkippedLine['file']) => {
    if ((typeof text === 'number' ? text : Buffer.byteLength(text)) <= MAX_RULES_FILE_BYTES) return false;
    skipper(file)(1, `the file is larger than ${MAX_RULES_FILE_BYTES / 1024 / 1024} MiB and was not read`);
    return true;
  };
  const compile = <T>(
    text: string | number | null | undefined,
    file: SkippedLine['file'],
    how: (text: string, skip: ReturnType<typeof skipper>) => T[],
  ) => (text == null || tooLarge(text, file) || typeof text === 'number' ? [] : how(text, skipper(file)));
  const redirects = compile(files.redirects, REDIRECTS_FILE, compileRedirects);
  const headers = compile(files.headers, HEADERS_FILE, compileHeaders);
  return { redirects, headers, skipped, skipped_count: count };
}

/**
 * Rules by the literal first segment of their pattern; the others (a placeholder or `*` first) by their exact
 * length when they have no splat, else apart. A request tests only the rules that can match it.
 */
class PatternIndex<T extends { pattern: PathPattern }> {
  private readonly byFirst = new Map<string, number[]>();
  private readonly byLength = new Map<number, number[]>();
  private readonly splats: number[] = [];

  constructor(readonly rules: readonly T[]) {
    const add = <K>(map: Map<K, number[]>, key: K, index: number) => {
      const list = map.get(key);
      if (list) list.push(index);
      else map.set(key, [index]);
    };
    rules.forEach((rule, index) => {
      const { parts, splat } = rule.pattern;
      const first = parts[0];
      // An exact `/` has no first segment: '' stands for it.
      if (typeof first === 'string') add(this.byFirst, first, index);
      else if (parts.length === 0 && splat === null) add(this.byFirst, '', index);
      else if (splat === null) add(this.byLength, parts.length, index);
      else this.splats.push(index);
    });
  }

  /** Calls `visit` with each rule that may match, in file order, until it returns true. */
  each(segments: readonly string[], visit: (rule: T) => boolean): void {
    const lists = [this.byFirst.get(segments[0] ?? ''), this.byLength.get(segments.length), this.splats].filter(
      (list): list is number[] => list !== undefined && list.length > 0,
    );
    if (lists.length === 1) {
      for (const index of lists[0]!) if (visit(this.rules[index]!)) return;
      return;
    }
    // File order across the lists: each is in file order, so take the lowest head each time.
    const at = lists.map(() => 0);
    for (;;) {
      let pick = -1;
      for (let l = 0; l < lists.length; l++) {
        if (at[l]! < lists[l]!.length && (pick === -1 || lists[l]![at[l]!]! < lists[pick]![at[pick]!]!)) pick = l;
      }
      if (pick === -1) return;
      if (visit(this.rules[lists[pick]![at[pick]!++]!]!)) return;
    }
  }

  get size(): number {
    return this.rules.length;
  }
}

export interface RedirectMatch {
  rule: RedirectRule;
  /** `to` with its placeholders and `:splat` filled in (percent-encoded). */
  target: string;
}

export interface ServingRulesMatcher {
  /**
   * The first rule matching the path: any rule when no file of the deployment answers it (`fileFound` false),
   * else only a forced (`!`) one.
   */
  redirect(segments: readonly string[], fileFound: boolean): RedirectMatch | null;
  /** Applies every matching `_headers` block to reply headers (names lower-cased), in file order. */
  applyHeaders(segments: readonly string[], headers: Record<string, string>): void;
}

const encodeSegments = (value: string) => value.split('/').map(encodeURIComponent).join('/');

/** `to` with `:name` and `:splat` replaced by what the request held there; a `:word` that names nothing stays. */
export function fillTarget(to: string, params: Record<string, string>): string {
  if (!to.includes(':')) return to;
  return to.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (whole, name: string) =>
    Object.hasOwn(params, name) ? encodeSegments(params[name]!) : whole,
  );
}

/** The Location of a redirect: the request's query joins `to` unless `to` has a query of its own. */
export function redirectLocation(target: string, requestQuery: string): string {
  if (!requestQuery) return target;
  const hash = target.indexOf('#');
  const beforeHash = hash === -1 ? target : target.slice(0, hash);
  if (beforeHash.includes('?')) return target;
  return `${beforeHash}?${requestQuery}${hash === -1 ? '' : target.slice(hash)}`;
}

/** The matcher of compiled rules: built once per route manifest, cheap per request. */
export function servingRulesMatcher(rules: ServingRules): ServingRulesMatcher {
  const all = new PatternIndex(rules.redirects);
  const forced = new PatternIndex(rules.redirects.filter((rule) => rule.force));
  const headers = new PatternIndex(rules.headers);
  return {
    redirect(segments, fileFound) {
      const index = fileFound ? forced : all;
      if (index.size === 0) return null;
      let found: RedirectMatch | null = null;
      index.each(segments, (rule) => {
        const params = matchPathPattern(rule.pattern, segments);
        if (params) found = { rule, target: fillTarget(rule.to, params) };
        return params !== null;
      });
      return found;
    },
    applyHeaders(segments, reply) {
      if (headers.size === 0) return;
      const set = new Set<string>();
      headers.each(segments, (rule) => {
        if (!matchPathPattern(rule.pattern, segments)) return false;
        for (const [name, value] of rule.headers) {
          // The first block's value replaces the platform's default; later ones join it.
          reply[name] = set.has(name) ? `${reply[name]}, ${value}` : value;
          set.add(name);
        }
        return false;
      });
    },
  };
}

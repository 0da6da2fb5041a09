/**
 * Reads `export const config = { schedule: '...' }` from a function file's text without running it (issue 36
 * item 1: the schedule is known at publish, from static analysis of the exported object, as Netlify reads its
 * scheduled functions' config). The file is scanned as tokens (comments, strings, template literals and regular
 * expressions skipped whole) for a top-level `export const config =` followed by an object literal; its
 * `schedule` property must be a string literal (quotes, or a template literal without `${}`). Other properties
 * are left alone. TypeScript is read too: `export const config: Config = {...}` and a trailing `satisfies` or
 * `as` after the object are accepted.
 */
export type ScheduleConfigRead = { ok: true; schedule: string | null } | { ok: false; error: string };

type Token = { kind: 'word' | 'punct' | 'string'; text: string; value?: string; template?: boolean };

const PUNCT_BEFORE_REGEX = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^']);

type Read = { token: Token; end: number } | string;

/** A quoted string opening at `i`, its escapes read; the index just past it. */
function quotedString(source: string, i: number): Read {
  const n = source.length;
  const quote = source[i];
  let value = '';
  let j = i + 1;
  for (; j < n && source[j] !== quote; j++) {
    if (source[j] === '\n') return 'an unclosed string';
    if (source[j] === '\\') {
      j++;
      value += source[j] === 'n' ? '\n' : source[j] === 't' ? '\t' : (source[j] ?? '');
    } else value += source[j];
  }
  if (j >= n) return 'an unclosed string';
  return { token: { kind: 'string', text: source.slice(i, j + 1), value }, end: j + 1 };
}

/** A template literal: its value only when it has no substitution; nested ones are skipped by brace depth. */
function templateLiteral(source: string, i: number): Read {
  const n = source.length;
  let j = i + 1;
  let value = '';
  let substituted = false;
  while (j < n && source[j] !== '`') {
    if (source[j] === '\\') {
      value += source[j + 1] ?? '';
      j += 2;
    } else if (source[j] === '$' && source[j + 1] === '{') {
      substituted = true;
      let depth = 1;
      j += 2;
      while (j < n && depth > 0) {
        if (source[j] === '{') depth++;
        else if (source[j] === '}') depth--;
        j++;
      }
    } else value += source[j++];
  }
  if (j >= n) return 'an unclosed template literal';
  return { token: { kind: 'string', text: source.slice(i, j + 1), value: substituted ? undefined : value, template: true }, end: j + 1 };
}

function tokenize(source: string): Token[] | string {
  const tokens: Token[] = [];
  let i = 0;
  const n = source.length;
  while (i < n) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '/' && source[i + 1] === '/') {
      while (i < n && source[i] !== '\n') i++;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) return 'an unclosed comment';
      i = end + 2;
    } else if (c === '"' || c === "'" || c === '`') {
      const read = c === '`' ? templateLiteral(source, i) : quotedString(source, i);
      if (typeof read === 'string') return read;
      tokens.push(read.token);
      i = read.end;
    } else if (c === '/') {
      const previous = tokens.at(-1);
      const regexHere =
        !previous ||
        (previous.kind === 'punct' && PUNCT_BEFORE_REGEX.has(previous.text)) ||
        /^(return|typeof|case|in|of|void)$/.test(previous.text);
      if (regexHere) {
        let j = i + 1;
        let inClass = false;
        for (; j < n; j++) {
          const d = source[j];
          if (d === '\\') j++;
          else if (d === '[') inClass = true;
          else if (d === ']') inClass = false;
          else if (d === '/' && !inClass) break;
          else if (d === '\n') return 'an unclosed regular expression';
        }
        i = j + 1;
        while (i < n && /[a-z]/i.test(source[i]!)) i++;
      } else {
        tokens.push({ kind: 'punct', text: '/' });
        i++;
      }
    } else if (/[A-Za-z_$\d]/.test(c)) {
      let j = i;
      while (j < n && /[\w$.]/.test(source[j]!)) j++;
      tokens.push({ kind: 'word', text: source.slice(i, j) });
      i = j;
    } else {
      tokens.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return tokens;
}

/** The index just past the bracketed group opening at `start` (its `{`, `[` or `(`). */
function skipGroup(tokens: Token[], start: number): number {
  let depth = 0;
  for (let i = start; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== 'punct') continue;
    if ('{[('.includes(t.text)) depth++;
    else if ('}])'.includes(t.text) && --depth === 0) return i + 1;
  }
  return tokens.length;
}

export function readScheduleConfig(source: string): ScheduleConfigRead {
  const tokens = tokenize(source);
  if (typeof tokens === 'string') return { ok: false, error: `the file could not be read: ${tokens}` };
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'punct' && '{[('.includes(t.text)) depth++;
    else if (t.kind === 'punct' && '}])'.includes(t.text)) depth--;
    if (depth !== 0 || t.text !== 'export') continue;
    if (!/^(const|let|var)$/.test(tokens[i + 1]?.text ?? '') || tokens[i + 2]?.text !== 'config') continue;
    let j = i + 3;
    // A TypeScript annotation: `: Config` up to the `=`.
    if (tokens[j]?.text === ':') while (j < tokens.length && tokens[j]!.text !== '=') j++;
    if (tokens[j]?.text !== '=') continue;
    if (tokens[j + 1]?.text !== '{') return { ok: false, error: 'the exported config is not an object literal' };
    return readObject(tokens, j + 1);
  }
  return { ok: true, schedule: null };
}

function readObject(tokens: Token[], open: number): ScheduleConfigRead {
  const end = skipGroup(tokens, open) - 1;
  let i = open + 1;
  while (i < end) {
    const key = tokens[i]!;
    const name = key.kind === 'string' ? key.value : key.kind === 'word' ? key.text : undefined;
    if (key.text === '.') return { ok: false, error: 'the exported config spreads another object; write its schedule out' };
    if (name === undefined) return { ok: false, error: 'the exported config is not an object literal' };
    if (tokens[i + 1]?.text !== ':') {
      // Shorthand `{ schedule }` or a method: the value is not written here.
      if (name === 'schedule') return { ok: false, error: 'config.schedule must be a string literal' };
      i = nextProperty(tokens, i + 1, end);
      continue;
    }
    const valueStart = i + 2;
    const valueEnd = nextProperty(tokens, valueStart, end) - (tokens[nextProperty(tokens, valueStart, end) - 1]?.text === ',' ? 1 : 0);
    if (name === 'schedule') {
      const value = tokens[valueStart];
      if (valueEnd - valueStart !== 1 || value?.kind !== 'string' || value.value === undefined)
        return { ok: false, error: 'config.schedule must be a string literal' };
      return { ok: true, schedule: value.value };
    }
    i = nextProperty(tokens, valueStart, end);
  }
  return { ok: true, schedule: null };
}

/** The index of the token after the property starting at `i`: past its comma, or `end`. */
function nextProperty(tokens: Token[], i: number, end: number): number {
  while (i < end) {
    const t = tokens[i]!;
    if (t.kind === 'punct' && '{[('.includes(t.text)) {
      i = skipGroup(tokens, i);
      continue;
    }
    i++;
    if (t.kind === 'punct' && t.text === ',') return i;
  }
  return end;
}

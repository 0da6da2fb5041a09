/**
 * A live tail's events as lines of text (docs/functions.md, "Live tail"), the same in `slipway logs NAME --follow`
 * and the console's functions page. Pure: no imports, so the console's bundle and the CLI take it as it is.
 */

/** What a tail event carries (each event has some of these). */
export interface TailEventData {
  at?: string;
  stream?: string;
  line?: string;
  message?: string;
  stack?: string;
  method?: string;
  status?: number | null;
  duration_ms?: number;
  outcome?: string;
}

/**
 * One event as a line: its time (as `time` writes it: the ISO string by default), a word saying what it is padded
 * to one width (the stream of a console line, `error`, `call`), then what it says. Null for the events that are
 * not lines (`open`, `end`, a comment).
 */
export function tailEventLine(event: string, data: TailEventData, time: (at: string) => string = (at) => at): string | null {
  const at = time(data.at ?? '');
  if (event === 'console') return `${at} ${String(data.stream).padEnd(6)} ${data.line}`;
  if (event === 'error') return `${at} error  ${data.stack || data.message}`;
  if (event === 'call')
    return `${at} call   ${data.method} ${data.status ?? '(no reply: the caller went away)'} ${data.duration_ms} ms ${data.outcome}`;
  return null;
}

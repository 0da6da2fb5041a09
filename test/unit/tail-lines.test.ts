import { describe, expect, it } from 'vitest';
import { tailEventLine } from '../../lib/functions/tail-lines.ts';

/** A live tail's events as the CLI and the console print them (lib/functions/tail-lines.ts). */
describe('tail event lines', () => {
  const at = '2026-11-28T12:00:00.000Z';

  it('writes console lines, errors and calls with the time and a word of one width', () => {
    expect(tailEventLine('console', { at, stream: 'stdout', line: 'handling 7' })).toBe(`${at} stdout handling 7`);
    expect(tailEventLine('console', { at, stream: 'stderr', line: 'about to fail' })).toBe(`${at} stderr about to fail`);
    expect(tailEventLine('error', { at, message: 'nope', stack: 'Error: nope\n    at f (a.js:1:1)' })).toBe(
      `${at} error  Error: nope\n    at f (a.js:1:1)`,
    );
    expect(tailEventLine('error', { at, message: 'nope', stack: '' })).toBe(`${at} error  nope`);
    expect(tailEventLine('call', { at, method: 'GET', status: 500, duration_ms: 12, outcome: 'handler_error' })).toBe(
      `${at} call   GET 500 12 ms handler_error`,
    );
    expect(tailEventLine('call', { at, method: 'POST', status: null, duration_ms: 3, outcome: 'caller_gone' })).toBe(
      `${at} call   POST (no reply: the caller went away) 3 ms caller_gone`,
    );
  });

  it('takes the time as the caller shows it, and is null for what is not a line', () => {
    expect(tailEventLine('console', { at, stream: 'stdout', line: 'x' }, () => '12:00:00')).toBe('12:00:00 stdout x');
    expect(tailEventLine('open', { at })).toBeNull();
    expect(tailEventLine('end', {})).toBeNull();
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { Logger } from '../../lib/logger.ts';

/** The structured logger: one JSON line per entry, levels, a request's keys, errors as fields. */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (err.push(String(chunk)), true));
  return { out, err };
}

afterEach(() => vi.restoreAllMocks());

describe('Logger', () => {
  it('writes one JSON line per entry: info and debug on stdout, warn and error on stderr, below the level nothing', () => {
    const { out, err } = capture();
    const log = new Logger({ service: 'slipway' });
    log.setLogLevel('INFO');
    log.debug('hidden');
    log.info('shown', { count: 2 });
    log.warn('careful');
    log.error('broken', { reason: 'x' });
    expect(out).toHaveLength(1);
    expect(out[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(out[0]!)).toEqual({
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: 'INFO',
      message: 'shown',
      service: 'slipway',
      count: 2,
    });
    expect(err.map((line) => JSON.parse(line).level)).toEqual(['WARN', 'ERROR']);
  });

  it('a child carries its persistent keys and its parent level; an Error becomes name, message and stack; a bigint is written as a string', () => {
    const { err } = capture();
    const root = new Logger({ service: 'slipway' });
    root.setLogLevel('ERROR');
    const child = root.createChild({ persistentKeys: { request_id: 'r-1', trace_id: 't-1' } });
    child.warn('not at this level');
    child.error('failed', new Error('boom', { cause: new TypeError('inner') }));
    child.error('sized', { bytes: 10n });
    const [failed, sized] = err.map((line) => JSON.parse(line));
    expect(failed).toMatchObject({
      level: 'ERROR',
      request_id: 'r-1',
      trace_id: 't-1',
      error: { name: 'Error', message: 'boom', cause: { name: 'TypeError', message: 'inner' } },
    });
    expect(failed.error.stack).toContain('logger.test.ts');
    expect(sized).toMatchObject({ bytes: '10' });
  });

  it('takes its level from LOG_LEVEL, else AWS_LAMBDA_LOG_LEVEL; a circular value still leaves a line', () => {
    const { out } = capture();
    const saved = { ...process.env };
    try {
      delete process.env.LOG_LEVEL;
      process.env.AWS_LAMBDA_LOG_LEVEL = 'DEBUG';
      new Logger({}).debug('lambda level');
      process.env.LOG_LEVEL = 'WARN';
      new Logger({}).info('dropped');
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      process.env.LOG_LEVEL = 'INFO';
      new Logger({}).info('circular', circular);
    } finally {
      process.env = saved;
    }
    expect(out.map((line) => JSON.parse(line).message)).toEqual(['lambda level', 'circular']);
    expect(JSON.parse(out[1]!).log_error).toBe('entry not serializable');
  });
});

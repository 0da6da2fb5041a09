import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decryptEnvValue, encryptEnvValue } from '../../lib/env/encryption.ts';
import { DEFAULT_ENV_TARGETS, ENV_TARGETS, envNameProblem, parseEnvContent } from '../../lib/env/variables.ts';

describe('parseEnvContent', () => {
  it('handles comments, export prefixes, quotes, multi-line values and a repeated name (the last wins)', () => {
    const content = [
      '# database',
      'export DATABASE_URL=postgres://db/app',
      'QUOTED="a value # not a comment"',
      "SINGLE='x y'",
      'PRIVATE_KEY="-----BEGIN KEY-----',
      'line two',
      '-----END KEY-----"',
      'INLINE=value # a comment',
      'EMPTY=',
      'REPEATED=first',
      'REPEATED=second',
      '',
    ].join('\n');
    const { variables, rejected } = parseEnvContent(content);
    expect(Object.fromEntries(variables.map((v) => [v.name, v.value]))).toEqual({
      DATABASE_URL: 'postgres://db/app',
      QUOTED: 'a value # not a comment',
      SINGLE: 'x y',
      PRIVATE_KEY: '-----BEGIN KEY-----\nline two\n-----END KEY-----',
      INLINE: 'value',
      EMPTY: '',
      REPEATED: 'second',
    });
    expect(rejected).toEqual([]);
  });

  it('rejects bad and reserved names by name, and lines that are not assignments by line number only', () => {
    const { variables, rejected } = parseEnvContent(
      'OK=1\nBAD-NAME=2\n1ABC=3\nAWS_SECRET_ACCESS_KEY=4\nslipway_token=5\nthis line is a secret\nPATH=/bin\n',
    );
    expect(variables).toEqual([{ name: 'OK', value: '1' }]);
    expect(rejected).toEqual([
      { line: 6, reason: 'not_a_variable_line', message: 'This line is not NAME=value, a comment or blank.' },
      { name: 'BAD-NAME', reason: 'invalid_name', message: expect.any(String) },
      { name: '1ABC', reason: 'invalid_name', message: expect.any(String) },
      { name: 'AWS_SECRET_ACCESS_KEY', reason: 'reserved_name', message: 'This name is reserved by the platform.' },
      { name: 'slipway_token', reason: 'reserved_name', message: 'This name is reserved by the platform.' },
      { name: 'PATH', reason: 'reserved_name', message: 'This name is reserved by the platform.' },
    ]);
    expect(JSON.stringify(rejected)).not.toContain('this line is a secret');
  });

  it('rejects a value over 64 KiB', () => {
    const { variables, rejected } = parseEnvContent(`BIG=${'x'.repeat(64 * 1024 + 1)}\nSMALL=${'x'.repeat(64 * 1024)}`);
    expect(variables.map((v) => v.name)).toEqual(['SMALL']);
    expect(rejected).toEqual([{ name: 'BIG', reason: 'value_too_large', message: 'The value is larger than 65536 bytes.' }]);
  });

  it('finds nothing in text with no assignment', () => {
    expect(parseEnvContent('# only a comment\n\n')).toEqual({ variables: [], rejected: [] });
  });
});

describe('names and targets', () => {
  it('validates names', () => {
    expect(envNameProblem('NEXT_PUBLIC_API')).toBeNull();
    expect(envNameProblem('_private')).toBeNull();
    expect(envNameProblem('a'.repeat(256))).toBeNull();
    expect(envNameProblem('a'.repeat(257))).toBe('invalid_name');
    expect(envNameProblem('9LIVES')).toBe('invalid_name');
    expect(envNameProblem('WITH SPACE')).toBe('invalid_name');
    expect(envNameProblem('aws_region')).toBe('reserved_name');
  });

  it('has one target, build, which is also the default', () => {
    expect(ENV_TARGETS).toEqual(['build']);
    expect(DEFAULT_ENV_TARGETS).toEqual(['build']);
  });
});

describe('value encryption', () => {
  const saved = process.env.ENV_ENCRYPTION_KEY;
  beforeEach(() => {
    process.env.ENV_ENCRYPTION_KEY = randomBytes(32).toString('base64');
  });
  afterEach(() => {
    process.env.ENV_ENCRYPTION_KEY = saved;
  });
  const context = { projectId: 'p1', environment: 'production', name: 'API_TOKEN' };

  it('round-trips, with a fresh IV each time and no plaintext in the sealed form', () => {
    const a = encryptEnvValue('s3cr3t-value', context);
    const b = encryptEnvValue('s3cr3t-value', context);
    expect(a).not.toBe(b);
    expect(a).not.toContain('s3cr3t');
    expect(a.startsWith('v1.')).toBe(true);
    expect(decryptEnvValue(a, context)).toBe('s3cr3t-value');
  });

  it('does not decrypt on another variable, or under another key', () => {
    const sealed = encryptEnvValue('s3cr3t-value', context);
    expect(() => decryptEnvValue(sealed, { ...context, name: 'OTHER' })).toThrow();
    expect(() => decryptEnvValue(sealed, { ...context, environment: 'preview' })).toThrow();
    process.env.ENV_ENCRYPTION_KEY = randomBytes(32).toString('base64');
    expect(() => decryptEnvValue(sealed, context)).toThrow();
  });
});

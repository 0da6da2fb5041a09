import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { decryptEnvValue, encryptEnvValue, parseEnvEncryptionKey } from '../../lib/env/encryption.ts';

const refusal = 'ENV_ENCRYPTION_KEY must be 32 bytes: base64-encoded, or 64 hex characters';

describe('ENV_ENCRYPTION_KEY spellings', () => {
  const saved = process.env.ENV_ENCRYPTION_KEY;
  afterEach(() => {
    process.env.ENV_ENCRYPTION_KEY = saved;
  });
  const context = { projectId: 'p1', environment: 'production', name: 'API_TOKEN' };

  it('reads 32 bytes given as base64 (the local platform) and as 64 hex characters (the stack secret) to the same key', () => {
    const bytes = randomBytes(32);
    expect(parseEnvEncryptionKey(bytes.toString('base64'))).toEqual(bytes);
    expect(parseEnvEncryptionKey(bytes.toString('hex'))).toEqual(bytes);
    expect(parseEnvEncryptionKey(bytes.toString('hex').toUpperCase())).toEqual(bytes);

    // A value sealed under one spelling opens under the other.
    process.env.ENV_ENCRYPTION_KEY = bytes.toString('hex');
    const sealed = encryptEnvValue('s3cr3t-value', context);
    process.env.ENV_ENCRYPTION_KEY = bytes.toString('base64');
    expect(decryptEnvValue(sealed, context)).toBe('s3cr3t-value');
  });

  it('reads the shape Secrets Manager generates for the stack: 64 characters of 0-9a-f', () => {
    const generated = '0123456789abcdef'.repeat(4);
    expect(parseEnvEncryptionKey(generated)).toEqual(Buffer.from(generated, 'hex'));
  });

  it('refuses a key of the wrong length in either spelling, and text in neither', () => {
    for (const wrong of [
      randomBytes(16).toString('base64'),
      randomBytes(31).toString('base64'),
      randomBytes(33).toString('base64'),
      randomBytes(31).toString('hex'),
      randomBytes(33).toString('hex'),
      `${randomBytes(32).toString('hex').slice(0, 63)}g`,
      'correct horse battery staple',
      '',
    ]) {
      expect(() => parseEnvEncryptionKey(wrong), wrong).toThrow(refusal);
    }
    process.env.ENV_ENCRYPTION_KEY = randomBytes(24).toString('base64');
    expect(() => encryptEnvValue('v', context)).toThrow(refusal);
  });
});

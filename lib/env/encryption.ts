import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { config } from '../config.ts';

/**
 * Values are encrypted at rest with AES-256-GCM under ENV_ENCRYPTION_KEY.
 * The additional data binds a ciphertext to its project, environment and
 * name, so a ciphertext copied onto another variable does not decrypt.
 * (In the cloud, KMS envelope encryption with a per-team data key would be
 * the stronger choice; this keeps one code path for the local platform and
 * AWS with the key held in Secrets Manager.)
 */
const KEY_VERSION = 'v1';

/**
 * The key as 32 bytes. Two spellings: base64 (what the local platform
 * generates) and 64 hex characters (what the stack's Secrets Manager secret
 * holds: GenerateSecretString picks from character classes and cannot emit
 * the base64 of exactly 32 bytes, but limited to 0-9a-f it emits hex).
 * Anything else is refused rather than stretched or truncated into a key.
 */
export function parseEnvEncryptionKey(text: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(text)) {
    const raw = Buffer.from(text, 'base64');
    if (raw.length === 32) return raw;
  }
  throw new Error('ENV_ENCRYPTION_KEY must be 32 bytes: base64-encoded, or 64 hex characters');
}

function key(): Buffer {
  return parseEnvEncryptionKey(config.envEncryptionKey());
}

const aad = (context: { projectId: string; environment: string; name: string }) =>
  Buffer.from(`${context.projectId}\u0000${context.environment}\u0000${context.name}`);

export function encryptEnvValue(value: string, context: { projectId: string; environment: string; name: string }): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(), iv);
  cipher.setAAD(aad(context));
  const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return [KEY_VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join('.');
}

export function decryptEnvValue(sealed: string, context: { projectId: string; environment: string; name: string }): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== KEY_VERSION || !iv || !tag || ciphertext === undefined) throw new Error('Unknown environment value format');
  const decipher = createDecipheriv('aes-256-gcm', key(), Buffer.from(iv, 'base64'));
  decipher.setAAD(aad(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
}

import { createPublicKey, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  deriveForgeKey,
  FORGE_KEY_SKEW_SECONDS,
  FORGE_TOKEN_SECONDS,
  forgeJwks,
  forgeKeysAt,
  jwkThumbprint,
  parseForgeKeySet,
  rotateForgeKeySet,
  signForgeToken,
} from '../../lib/git/forge-keys.ts';
import { verifyForgeToken } from '../support/forge-tokens.ts';

/**
 * The forge tokens' keys (issue 39, item 1): ES256 keys derived from the secret's seeds, published as a
 * JWKS with RFC 7638 `kid`s, and a rotation that announces the next key ahead and keeps the old one
 * published until the last token it signed has expired.
 */
const seedA = 'a'.repeat(20) + randomBytes(24).toString('base64url');
const seedB = 'b'.repeat(20) + randomBytes(24).toString('base64url');
const at = (iso: string) => new Date(iso);
const claims = (now: Date) => {
  const iat = Math.floor(now.getTime() / 1000);
  return {
    iss: 'https://app.example.test',
    sub: 'team:t1:project:p1',
    aud: 'https://forge.example.test',
    iat,
    nbf: iat,
    exp: iat + FORGE_TOKEN_SECONDS,
  };
};
const verifyAt = (token: string, jwks: ReturnType<typeof forgeJwks>, now: Date) =>
  verifyForgeToken(token, {
    jwks,
    issuer: 'https://app.example.test',
    audience: 'https://forge.example.test',
    subject: 'team:t1:project:p1',
    now,
  });

describe('forge signing keys', () => {
  it('derives one P-256 key per seed, the same every time, with the RFC 7638 thumbprint as kid and no private part in the JWKS', () => {
    const one = deriveForgeKey(seedA);
    expect(deriveForgeKey(seedA).jwk).toEqual(one.jwk);
    expect(deriveForgeKey(seedB).jwk.kid).not.toBe(one.jwk.kid);
    expect(one.jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(one.jwk.kid).toBe(jwkThumbprint(one.jwk));
    // The thumbprint is the one any JOSE library computes: SHA-256 of {"crv","kty","x","y"}, base64url.
    expect(one.jwk.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const jwks = forgeJwks(seedA, new Date());
    expect(jwks.keys).toEqual([one.jwk]);
    expect(JSON.stringify(jwks)).not.toContain('"d"');
    // The published half is a valid public key.
    expect(createPublicKey({ key: { ...jwks.keys[0]! }, format: 'jwk' }).asymmetricKeyType).toBe('ec');
  });

  it('signs ES256 (R || S, 64 bytes) tokens a forge verifies with the JWKS alone; a changed token or another key fails', () => {
    const now = new Date();
    const token = signForgeToken(seedA, claims(now), now);
    const [header, , signature] = token.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({
      alg: 'ES256',
      typ: 'JWT',
      kid: deriveForgeKey(seedA).jwk.kid,
    });
    expect(Buffer.from(signature!, 'base64url')).toHaveLength(64);
    expect(verifyAt(token, forgeJwks(seedA, now), now)).toMatchObject({ ok: true });
    expect(verifyAt(token, forgeJwks(seedB, now), now)).toEqual({ ok: false, why: expect.stringMatching(/^unknown kid/) });
    const tampered = token.replace(/\.([^.]+)\./, (_m, body: string) => {
      const changed = { ...JSON.parse(Buffer.from(body, 'base64url').toString()), sub: 'team:t2:project:p2' };
      return `.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.`;
    });
    expect(verifyAt(tampered, forgeJwks(seedA, now), now)).toEqual({ ok: false, why: 'bad signature' });
  });

  it('rotation: the next key is published before it signs, and the old key stays published until its last token has expired', () => {
    const value = JSON.stringify({
      keys: [
        { seed: seedA, from: '2025-01-01T00:00:00Z' },
        { seed: seedB, from: '2025-06-01T12:00:00Z' },
      ],
    });
    const a = deriveForgeKey(seedA).jwk.kid;
    const b = deriveForgeKey(seedB).jwk.kid;
    const kids = (iso: string) => forgeJwks(value, at(iso)).keys.map((k) => k.kid);
    const signer = (iso: string) => forgeKeysAt(value, at(iso)).signing.kid;

    // Announced: B is published a while before it signs; A signs.
    expect(signer('2025-06-01T11:45:00Z')).toBe(a);
    expect(kids('2025-06-01T11:45:00Z')).toEqual([a, b]);
    // A token A signed just before the switch...
    const last = at('2025-06-01T11:59:59Z');
    const token = signForgeToken(value, claims(last), last);
    // ...after it B signs, and A stays published for the token's lifetime and the clock skew allowance.
    expect(signer('2025-06-01T12:00:00Z')).toBe(b);
    const lastValid = at('2025-06-01T12:04:58Z');
    expect(kids(lastValid.toISOString())).toEqual([a, b]);
    expect(verifyAt(token, forgeJwks(value, lastValid), lastValid)).toMatchObject({ ok: true, kid: a });
    const edge = new Date(Date.parse('2025-06-01T12:00:00Z') + (FORGE_TOKEN_SECONDS + FORGE_KEY_SKEW_SECONDS - 1) * 1000);
    expect(kids(edge.toISOString())).toEqual([a, b]);
    // Then A is gone: every token it signed has expired.
    const gone = new Date(Date.parse('2025-06-01T12:00:00Z') + (FORGE_TOKEN_SECONDS + FORGE_KEY_SKEW_SECONDS) * 1000);
    expect(kids(gone.toISOString())).toEqual([b]);
  });

  it('rotateForgeKeySet keeps what is still published and announces a new key; a bare seed is a set of one', () => {
    const now = at('2025-03-01T00:00:00Z');
    const rotated = rotateForgeKeySet(seedA, now, 900);
    const entries = parseForgeKeySet(rotated);
    expect(entries).toHaveLength(2);
    expect(entries[0]!.seed).toBe(seedA);
    expect(entries[1]!.from).toBe(Math.floor(now.getTime() / 1000) + 900);
    expect(forgeKeysAt(rotated, now).signing.kid).toBe(deriveForgeKey(seedA).jwk.kid);
    expect(forgeJwks(rotated, now).keys).toHaveLength(2);
    // The next rotation, long after: the first key, retired, is left out.
    const later = at('2025-04-01T00:00:00Z');
    const again = parseForgeKeySet(rotateForgeKeySet(rotated, later, 900));
    expect(again.map((e) => e.seed)).toEqual([entries[1]!.seed, expect.any(String)]);
  });

  it('refuses a value that is not a seed of 32 characters or more, or a key set without keys', () => {
    expect(() => parseForgeKeySet('short')).toThrow(/shorter than 32/);
    expect(() => parseForgeKeySet('{"keys": []}')).toThrow(/no keys/);
    expect(() => parseForgeKeySet('{"keys": [{"from": "2025-01-01T00:00:00Z"}]}')).toThrow(/no seed/);
    expect(() => parseForgeKeySet('{not json')).toThrow(/neither a seed nor/);
  });
});

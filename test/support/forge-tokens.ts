import { createPublicKey, verify } from 'node:crypto';

/**
 * A forge's side of forge tokens, as docs/builds.md ("Forge tokens") tells an operator to verify them:
 * the signature by the JWKS (ES256, the key `kid` names), then `iss`, `aud`, `exp` (and `nbf`), and
 * `sub` pinned to the one team and project the repository belongs to. What the tests' Git servers run.
 */
export interface Jwks {
  keys: { kty: string; crv: string; x: string; y: string; kid: string; alg: string; use: string }[];
}

export type ForgeCheck = { ok: true; claims: Record<string, any>; kid: string } | { ok: false; why: string };

export function verifyForgeToken(
  token: string,
  expected: { jwks: Jwks; issuer: string; audience: string; subject?: string; now?: Date },
): ForgeCheck {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, why: 'not a JWS' };
  const [head, body, signature] = parts as [string, string, string];
  let header: { alg?: string; kid?: string; typ?: string };
  let claims: Record<string, any>;
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, why: 'not JSON' };
  }
  // The algorithm is the verifier's choice, never the token's: ES256 only (no `none`, no HS256 with the public key).
  if (header.alg !== 'ES256') return { ok: false, why: `alg ${header.alg}` };
  const jwk = expected.jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return { ok: false, why: `unknown kid ${header.kid}` };
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
  const valid = verify('sha256', Buffer.from(`${head}.${body}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!valid) return { ok: false, why: 'bad signature' };
  const now = Math.floor((expected.now ?? new Date()).getTime() / 1000);
  if (claims.iss !== expected.issuer) return { ok: false, why: `iss ${claims.iss}` };
  if (claims.aud !== expected.audience) return { ok: false, why: `aud ${claims.aud}` };
  if (typeof claims.exp !== 'number' || claims.exp <= now) return { ok: false, why: 'expired' };
  if (typeof claims.nbf === 'number' && claims.nbf > now + 60) return { ok: false, why: 'not yet valid' };
  if (expected.subject !== undefined && claims.sub !== expected.subject) return { ok: false, why: `sub ${claims.sub}` };
  return { ok: true, claims, kid: header.kid! };
}

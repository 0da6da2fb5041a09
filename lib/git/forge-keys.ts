import { createECDH, createHash, createPrivateKey, hkdfSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { type JsonObject } from '../json.ts';

/**
 * The forge tokens' signing keys (docs/builds.md, "Forge tokens"): ES256 (ECDSA on P-256 with SHA-256),
 * the private halves held by the platform only, the public halves published as a JWKS at
 * `GET /.well-known/jwks.json`, so a forge verifies a token with no secret of the platform's.
 *
 * The secret `FORGE_SIGNING_KEY` (Secrets Manager in the stack, `.slipway/state/` locally) holds seeds,
 * not keys: each private key is derived from its seed (HKDF-SHA256 to a P-256 scalar), so the value
 * Secrets Manager generates at creation (64 letters and digits) is a key set of one key, and a rotation
 * is a JSON value that lists the keys with the time each starts signing:
 *
 *     {"keys": [{"seed": "<old>", "from": "2025-01-01T00:00:00Z"}, {"seed": "<new>", "from": "2025-06-01T12:15:00Z"}]}
 *
 * The key that signs is the newest one whose `from` has come (a bare seed: from ever). Published are that
 * key, every key whose `from` is still to come (so a forge's cached JWKS has it before its first token),
 * and every older key until its last token has expired: `FORGE_TOKEN_SECONDS` plus a minute of clock
 * skew after the next key took over. `kid` is the key's RFC 7638 JWK thumbprint.
 */

/** Lifetime of a forge token minted for one fetch. */
export const FORGE_TOKEN_SECONDS = 300;
/** Clock skew a forge may have: a retired key stays published this much longer than its last token lives. */
export const FORGE_KEY_SKEW_SECONDS = 60;
/** How long a forge may cache the JWKS (its Cache-Control); a rotation announces a key at least this long ahead. */
export const JWKS_MAX_AGE_SECONDS = 300;
/** The default announcement of a new key by `rotateForgeKeySet`: three cache lifetimes and the secret's refresh. */
export const ROTATION_LEAD_SECONDS = 15 * 60;

const MIN_SEED_LENGTH = 32;
/** P-256's group order: a private scalar is in [1, n-1]. */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

export interface ForgeKeyEntry {
  seed: string;
  /** When the key starts signing, epoch seconds (a bare seed: 0). */
  from: number;
}

export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

export interface ForgeKey {
  kid: string;
  from: number;
  privateKey: KeyObject;
  jwk: PublicJwk;
}

export class ForgeKeySetError extends Error {}

/** The key set of a secret value: a bare seed, or `{"keys": [{"seed", "from"}]}` (`from` ISO 8601 or epoch seconds). */
export function parseForgeKeySet(value: string): ForgeKeyEntry[] {
  const text = value.trim();
  let entries: ForgeKeyEntry[];
  if (text.startsWith('{')) {
    let parsed: { keys?: unknown };
    try {
      parsed = JSON.parse(text) as { keys?: unknown };
    } catch {
      throw new ForgeKeySetError('FORGE_SIGNING_KEY is neither a seed nor a JSON key set.');
    }
    if (!Array.isArray(parsed.keys) || parsed.keys.length === 0) throw new ForgeKeySetError('FORGE_SIGNING_KEY lists no keys.');
    entries = parsed.keys.map((raw: unknown) => {
      const entry = (raw ?? {}) as { seed?: unknown; from?: unknown };
      const from =
        entry.from === undefined || entry.from === null
          ? 0
          : typeof entry.from === 'number'
            ? entry.from
            : Math.floor(Date.parse(String(entry.from)) / 1000);
      if (typeof entry.seed !== 'string' || !Number.isFinite(from))
        throw new ForgeKeySetError('A key of FORGE_SIGNING_KEY has no seed or a bad `from`.');
      return { seed: entry.seed, from };
    });
  } else entries = [{ seed: text, from: 0 }];
  for (const entry of entries)
    if (entry.seed.length < MIN_SEED_LENGTH)
      throw new ForgeKeySetError(`A seed of FORGE_SIGNING_KEY is shorter than ${MIN_SEED_LENGTH} characters.`);
  return entries.sort((a, b) => a.from - b.from);
}

const derived = new Map<string, { privateKey: KeyObject; jwk: PublicJwk }>();

/** RFC 7638: the SHA-256 of the key's required members in lexical order, base64url. */
export function jwkThumbprint(jwk: { crv: string; kty: string; x: string; y: string }): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');
}

/** The ES256 key of a seed: HKDF-SHA256 to 32 bytes, the first that is a valid P-256 scalar. */
export function deriveForgeKey(seed: string): { privateKey: KeyObject; jwk: PublicJwk } {
  const known = derived.get(seed);
  if (known) return known;
  for (let counter = 0; ; counter++) {
    const d = Buffer.from(hkdfSync('sha256', seed, 'slipway-forge-token', `es256-p256-scalar-${counter}`, 32));
    const scalar = BigInt(`0x${d.toString('hex')}`);
    if (scalar === 0n || scalar >= P256_ORDER) continue;
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(d);
    const point = ecdh.getPublicKey();
    const x = point.subarray(1, 33).toString('base64url');
    const y = point.subarray(33, 65).toString('base64url');
    const privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url') }, format: 'jwk' });
    const kid = jwkThumbprint({ crv: 'P-256', kty: 'EC', x, y });
    const key = { privateKey, jwk: { kty: 'EC', crv: 'P-256', x, y, kid, alg: 'ES256', use: 'sig' } as PublicJwk };
    derived.set(seed, key);
    return key;
  }
}

/** The key that signs at `now` and the keys published at `now` (oldest first). */
export function forgeKeysAt(value: string, now: Date): { signing: ForgeKey; published: ForgeKey[] } {
  const entries = parseForgeKeySet(value);
  const at = Math.floor(now.getTime() / 1000);
  // The newest key whose time has come; when none has (a set of announced keys only), the first.
  let signingIndex = 0;
  entries.forEach((entry, i) => {
    if (entry.from <= at) signingIndex = i;
  });
  const keyOf = (entry: ForgeKeyEntry): ForgeKey => {
    const { privateKey, jwk } = deriveForgeKey(entry.seed);
    return { kid: jwk.kid, from: entry.from, privateKey, jwk };
  };
  const published = entries.filter((_entry, i) => {
    if (i >= signingIndex) return true;
    // Signed until the next key took over; its tokens live FORGE_TOKEN_SECONDS past that.
    const retiredAt = entries[i + 1]!.from;
    return at < retiredAt + FORGE_TOKEN_SECONDS + FORGE_KEY_SKEW_SECONDS;
  });
  return { signing: keyOf(entries[signingIndex]!), published: published.map(keyOf) };
}

/** The JWKS document: every published key's public half. */
export function forgeJwks(value: string, now: Date): { keys: PublicJwk[] } {
  const seen = new Set<string>();
  const keys: PublicJwk[] = [];
  for (const key of forgeKeysAt(value, now).published) {
    if (seen.has(key.kid)) continue;
    seen.add(key.kid);
    keys.push(key.jwk);
  }
  return { keys };
}

/**
 * The value of a rotation: the keys still published at `now`, and a new key (a random seed) that starts
 * signing `leadSeconds` from now. Put it into the secret; once the old key's tokens have expired it drops
 * out of the JWKS by itself (and out of the value at the next rotation).
 */
export function rotateForgeKeySet(value: string, now: Date, leadSeconds = ROTATION_LEAD_SECONDS): string {
  const at = Math.floor(now.getTime() / 1000);
  const published = new Set(forgeKeysAt(value, now).published.map((k) => k.kid));
  const kept = parseForgeKeySet(value).filter((entry) => published.has(deriveForgeKey(entry.seed).jwk.kid));
  const keys = [...kept, { seed: randomBytes(48).toString('base64url'), from: at + leadSeconds }];
  return JSON.stringify({ keys: keys.map((k) => ({ seed: k.seed, from: new Date(k.from * 1000).toISOString() })) });
}

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS of `claims`, ES256 under the key that signs at `now` (header `kid` names it). */
export function signForgeToken(value: string, claims: JsonObject, now: Date): string {
  const { signing } = forgeKeysAt(value, now);
  const input = `${base64url({ alg: 'ES256', typ: 'JWT', kid: signing.kid })}.${base64url(claims)}`;
  // JOSE's ES256 signature is R || S (64 bytes), not DER: dsaEncoding ieee-p1363.
  const signature = sign('sha256', Buffer.from(input), { key: signing.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Stripe's webhook signature (`Stripe-Signature: t=1700000000,v1=<hex>,v1=<hex>,v0=...`):
 * each `v1` is the hex HMAC-SHA256 of `${t}.${rawBody}` under the endpoint's
 * signing secret. Written on node:crypto rather than taken from the `stripe`
 * package, whose verifier comes only with the whole API client (about 240 KB
 * minified in a Lambda bundle that needs thirty lines of it); npm has no
 * well-kept verifier of this scheme on its own.
 */

/** How far `t` may be from now, either way: a captured delivery cannot be replayed after this. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureFailure = 'missing' | 'malformed' | 'timestamp_outside_tolerance' | 'no_matching_signature';

export function signPayload(secret: string, timestamp: number, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/** A header as the provider sends it, for tests and local tooling. */
export function signatureHeader(secret: string, rawBody: Buffer | string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${signPayload(secret, timestamp, rawBody)}`;
}

/**
 * Null when one `v1` signature of the header matches, else why not. Several
 * `v1` are accepted: while an endpoint secret is rolled, the provider signs
 * with the old and the new one. Other schemes (`v0`, test-mode extras) are
 * ignored, never trusted.
 */
export function verifySignature(
  header: string | undefined,
  rawBody: Buffer,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): SignatureFailure | null {
  if (header === undefined || header.trim() === '') return 'missing';
  let timestamp: number | null = null;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) return 'malformed';
    const name = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (name === 't') {
      // Two timestamps would leave it open which one was signed.
      if (timestamp !== null || !/^\d{1,12}$/.test(value)) return 'malformed';
      timestamp = Number(value);
    } else if (name === 'v1') {
      if (!/^[0-9a-f]{64}$/i.test(value)) return 'malformed';
      candidates.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null || candidates.length === 0) return 'malformed';
  if (Math.abs(nowSeconds - timestamp) > SIGNATURE_TOLERANCE_SECONDS) return 'timestamp_outside_tolerance';
  const expected = Buffer.from(signPayload(secret, timestamp, rawBody), 'hex');
  // Every candidate is compared, in constant time each, so the time taken says nothing about which matched.
  let matched = false;
  for (const candidate of candidates) matched = timingSafeEqual(candidate, expected) || matched;
  return matched ? null : 'no_matching_signature';
}

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { config } from '../config.ts';

/**
 * The `state` of a Git hosting app install: it travels through the Git host
 * and comes back on the callback, so it is signed (HMAC-SHA256) over the team,
 * the user and the expiry, and carries the S256 challenge of a verifier that
 * only the caller of the connect endpoint holds. Nothing is stored server
 * side: the callback recomputes the HMAC and the challenge, so a state copied
 * from a URL or a log is useless without the verifier.
 */
export const CONNECT_STATE_TTL_SECONDS = 10 * 60;

const VERSION = 1;

export interface ConnectStatePayload {
  v: number;
  team_id: string;
  user_id: string;
  /** Expiry, epoch seconds. */
  exp: number;
  /** base64url SHA-256 of the verifier (PKCE S256 style). */
  challenge: string;
  /** Makes every state unique even for the same team, user and second. */
  nonce: string;
}

export interface ConnectState {
  state: string;
  verifier: string;
  expiresAt: Date;
}

export type ConnectStateCheck =
  | { ok: true; teamId: string; userId: string; expiresAt: Date; challenge: string }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' | 'verifier_mismatch' };

function sign(encodedPayload: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(`slipway-git-connect.${encodedPayload}`).digest();
}

export function verifierChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export function createConnectState(input: { teamId: string; userId: string; now: Date; secret?: string }): ConnectState {
  const secret = input.secret ?? config.gitStateSecret();
  // 32 random bytes, base64url: the 43-character verifier RFC 7636 allows.
  const verifier = randomBytes(32).toString('base64url');
  const exp = Math.floor(input.now.getTime() / 1000) + CONNECT_STATE_TTL_SECONDS;
  const payload: ConnectStatePayload = {
    v: VERSION,
    team_id: input.teamId,
    user_id: input.userId,
    exp,
    challenge: verifierChallenge(verifier),
    nonce: randomBytes(9).toString('base64url'),
  };
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return { state: `${encoded}.${sign(encoded, secret).toString('base64url')}`, verifier, expiresAt: new Date(exp * 1000) };
}

/**
 * Checks a state coming back from the Git host: signature first (so nothing
 * of an unsigned payload is trusted), then the expiry, then, when the callback
 * passes it, the verifier against the signed challenge. Pure apart from the
 * secret's default (GIT_STATE_SECRET): the clock is an argument.
 */
export function verifyConnectState(state: string, now: Date, options: { secret?: string; verifier?: string } = {}): ConnectStateCheck {
  const secret = options.secret ?? config.gitStateSecret();
  const verifier = options.verifier;
  if (typeof state !== 'string' || state.length > 2048) return { ok: false, reason: 'malformed' };
  const parts = state.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]!) || !/^[A-Za-z0-9_-]+$/.test(parts[1]!)) {
    return { ok: false, reason: 'malformed' };
  }
  const [encoded, signature] = parts as [string, string];
  const expected = sign(encoded, secret);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };

  let payload: ConnectStatePayload;
  try {
    payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as ConnectStatePayload;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (
    payload?.v !== VERSION ||
    typeof payload.team_id !== 'string' ||
    typeof payload.user_id !== 'string' ||
    typeof payload.challenge !== 'string' ||
    !Number.isInteger(payload.exp)
  ) {
    return { ok: false, reason: 'malformed' };
  }
  if (Math.floor(now.getTime() / 1000) >= payload.exp) return { ok: false, reason: 'expired' };
  if (verifier !== undefined) {
    const a = Buffer.from(verifierChallenge(verifier));
    const b = Buffer.from(payload.challenge);
    if (a.length !== b.length || !timingSafeEqual(a, b)) return { ok: false, reason: 'verifier_mismatch' };
  }
  return {
    ok: true,
    teamId: payload.team_id,
    userId: payload.user_id,
    expiresAt: new Date(payload.exp * 1000),
    challenge: payload.challenge,
  };
}

/** The install URL with the state appended (GitHub Apps pass `state` back to the setup/callback URL). */
export function installUrlWithState(installUrl: string, state: string): string {
  const url = new URL(installUrl);
  url.searchParams.set('state', state);
  return url.toString();
}

import { createHash, randomBytes } from 'node:crypto';

/**
 * Bearer tokens are opaque random strings whose prefix names their kind.
 * Only the SHA-256 of a token is stored, so a table dump reveals no credential.
 */
export type TokenKind = 'session' | 'api_key';

const prefixes: Record<TokenKind, string> = { session: 'slw_s_', api_key: 'slw_k_' };
// 32 random bytes, base64url: 43 characters.
const TOKEN_SHAPE = /^slw_(s|k)_[A-Za-z0-9_-]{43}$/;

export function newToken(kind: TokenKind): string {
  return prefixes[kind] + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The kind of a well-formed token, or null for anything malformed. */
export function tokenKind(token: string): TokenKind | null {
  const match = TOKEN_SHAPE.exec(token);
  if (!match) return null;
  return match[1] === 's' ? 'session' : 'api_key';
}

/** The token of an `Authorization: Bearer <token>` header value, or null when malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return match ? match[1]! : null;
}

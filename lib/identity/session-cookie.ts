import { config } from '../config.ts';

/**
 * The console's session lives in this cookie: `HttpOnly` (no script reads it),
 * `SameSite=Lax`, `Secure` except when the console is on localhost (plain
 * http there), `Path=/`. The console and the API share one origin, so the
 * cookie is first-party and no CORS is involved.
 */
export const SESSION_COOKIE = 'slipway_session';
/** As long as a session lives (lib/identity/credential-records.ts). */
const SESSION_COOKIE_SECONDS = 30 * 86_400;

function isLocalhost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '127.0.0.1';
}

function flags(maxAgeSeconds: number): string {
  const secure = !isLocalhost(new URL(config.consoleUrl()).hostname);
  return `Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function sessionCookie(token: string): string {
  return `${SESSION_COOKIE}=${token}; ${flags(SESSION_COOKIE_SECONDS)}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; ${flags(0)}`;
}

/** The session token of the request's cookies (API Gateway's `event.cookies`, one `name=value` each), or null. */
export function sessionTokenFromCookies(cookies: readonly string[] | undefined): string | null {
  for (const cookie of cookies ?? []) {
    const at = cookie.indexOf('=');
    if (at > 0 && cookie.slice(0, at).trim() === SESSION_COOKIE) return cookie.slice(at + 1).trim() || null;
  }
  return null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request a browser may have sent from another site has to be
 * refused: a write (not GET, HEAD or OPTIONS) whose `Origin` is not the
 * console's, or that has none, or whose `Sec-Fetch-Site` says it is not
 * same-origin. SameSite=Lax alone is not enough: a site under the platform's
 * own site domain is the same *site* as the console (app.slipway.site and
 * anyone.slipway.site), so its forms and fetches would carry the cookie.
 * Browsers send `Origin` on every cross-origin request and on every same-origin
 * write, so the console's own writes always pass.
 */
export function isCrossSiteWrite(method: string, headers: Record<string, string>): boolean {
  if (SAFE_METHODS.has(method.toUpperCase())) return false;
  const fetchSite = headers['sec-fetch-site'];
  if (fetchSite && fetchSite !== 'same-origin') return true;
  return headers.origin !== config.consoleUrl();
}

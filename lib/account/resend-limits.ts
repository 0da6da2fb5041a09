import { TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { windowGiveBack, windowTake } from '../db/rate-window-records.ts';
import { type SIGN_IN_LINK_LIMITED } from '../errors/catalogue/request.ts';
import { EMAIL_RESEND_LIMITED } from '../errors/catalogue/accounts.ts';

/** Confirmation-link resends, per the spec's Limits: 3 per account and 10 per IP address per hour. */
export const RESEND_LIMITS = { account: 3, ip: 10 } as const;
const WINDOW_SECONDS = 3600;

export interface HourlyCounter {
  /** Names the limit and its subject: `resend:account:{user_id}`, `sign-in:ip:{ip}` ... */
  scope: string;
  limit: number;
}

function windowOf(now: Date) {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const start = nowSeconds - (nowSeconds % WINDOW_SECONDS);
  return { start, end: start + WINDOW_SECONDS, nowSeconds };
}

/**
 * Takes one resend from both the account's and the IP address's allowance,
 * or neither. Beyond either limit: 429 EMAIL_RESEND_LIMITED with Retry-After.
 */
export async function takeResendAllowance(userId: string, ip: string, now = new Date()): Promise<() => Promise<void>> {
  return takeHourlyAllowance(
    [
      { scope: `resend:account:${userId}`, limit: RESEND_LIMITS.account },
      { scope: `resend:ip:${ip || 'unknown'}`, limit: RESEND_LIMITS.ip },
    ],
    EMAIL_RESEND_LIMITED,
    now,
  );
}

/**
 * Takes one from every counter's allowance, or from none: one transaction of
 * conditional ADDs on fixed one-hour window counters (`count < limit`), so
 * parallel requests can never overshoot. Counter items expire by TTL a while
 * after their window closes. Beyond any limit: `code` (a 429) with
 * Retry-After, the seconds until the window frees; `details.limit` names the
 * first full counter by the second part of its scope (`ip` as `ip_address`).
 */
export async function takeHourlyAllowance(
  all: HourlyCounter[],
  code: typeof EMAIL_RESEND_LIMITED | typeof SIGN_IN_LINK_LIMITED,
  now = new Date(),
  attempt = 1,
): Promise<() => Promise<void>> {
  const window = windowOf(now);
  try {
    await transact(all.map((c) => windowTake(c.scope, c.limit, window.start, window.end + WINDOW_SECONDS)));
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    const failed = all.filter((c) => error.failed.has(c.scope));
    // No failed condition: DynamoDB cancelled on a write conflict with a racing request; try again a few times.
    if (failed.length === 0 && attempt < 5 && error.conflicted) {
      await new Promise((r) => setTimeout(r, 20 * attempt + Math.random() * 30));
      return takeHourlyAllowance(all, code, now, attempt + 1);
    }
    if (failed.length === 0) throw error;
    const retryAfter = Math.max(1, window.end - window.nowSeconds);
    const subject = failed[0]!.scope.split(':')[1];
    throw new ApiError(code, {
      headers: { 'Retry-After': String(retryAfter) },
      details: {
        limit: subject === 'ip' ? 'ip_address' : subject,
        max_per_hour: failed[0]!.limit,
        retry_after_seconds: retryAfter,
      },
    });
  }
  // Gives the allowance back when nothing could be sent, so an outage does not use up the hour.
  return async () => {
    await Promise.all(all.map((c) => windowGiveBack(c.scope, window.start)));
  };
}

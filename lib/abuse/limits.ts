import { createHash } from 'node:crypto';
import { config } from '../config.ts';
import { tryWindowTake, windowGiveBack } from '../db/rate-window-records.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { ABUSE_REPORT_RATE_LIMITED } from '../errors/catalogue/admin.ts';

/**
 * Abuse-report intake limits: per submitter (the IP address, and the reporter's
 * e-mail address when one is given, so nobody can make the platform mail
 * receipts to someone else's inbox in bulk) and platform-wide, per fixed
 * one-hour window. Each counter is one conditional ADD (`count < limit`): a
 * single-item conditional write never overshoots, whatever the concurrency,
 * and unlike a transaction over all of them it never fails on a conflict with
 * a racing request. The counters are taken one after another, submitter first
 * (a flood from one submitter stops at its own counter and never reaches the
 * platform's); when a later one refuses, the earlier ones are given back.
 */

const WINDOW_SECONDS = 3600;

export type AbuseLimitScope = 'ip_address' | 'email' | 'platform';

interface Counter {
  scope: AbuseLimitScope;
  key: string;
  limit: number;
}

function windowOf(now: Date) {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const start = nowSeconds - (nowSeconds % WINDOW_SECONDS);
  return { start, end: start + WINDOW_SECONDS, nowSeconds };
}

/** Counter items name a submitter by a hash: the table keeps no reporter address in a key. */
const digest = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 32);

export function abuseReportCounters(sourceIp: string, reporterEmail: string | null): Counter[] {
  const perSubmitter = config.abuseReportsPerSubmitterPerHour();
  return [
    { scope: 'ip_address' as const, key: `abuse:ip:${digest(sourceIp || 'unknown')}`, limit: perSubmitter },
    ...(reporterEmail ? [{ scope: 'email' as const, key: `abuse:email:${digest(reporterEmail.toLowerCase())}`, limit: perSubmitter }] : []),
    { scope: 'platform' as const, key: 'abuse:platform', limit: config.abuseReportsPlatformPerHour() },
  ];
}

/** The platform-wide counter's key for the window of `now` (tests read it). */
export function platformCounterKey(now = new Date()) {
  return keys.rateWindow('abuse:platform', windowOf(now).start);
}

const take = (counter: Counter, windowStart: number, ttl: number) => tryWindowTake(counter.key, counter.limit, windowStart, ttl);

const giveBack = (counter: Counter, windowStart: number) => windowGiveBack(counter.key, windowStart);

/**
 * Takes one report from every allowance, or from none: 429
 * ABUSE_REPORT_RATE_LIMITED with `Retry-After` (seconds until the window
 * ends) when one is used up. Returns what gives the allowance back, for a
 * report that could not be recorded.
 */
export async function takeAbuseReportAllowance(
  sourceIp: string,
  reporterEmail: string | null,
  now = new Date(),
): Promise<() => Promise<void>> {
  const window = windowOf(now);
  // Counters outlive their window by one more: the item is gone long before anyone could read it as current.
  const ttl = window.end + WINDOW_SECONDS;
  const taken: Counter[] = [];
  const release = async () => {
    await Promise.allSettled(taken.map((c) => giveBack(c, window.start)));
  };
  for (const counter of abuseReportCounters(sourceIp, reporterEmail)) {
    let ok: boolean;
    try {
      ok = await take(counter, window.start, ttl);
    } catch (error) {
      await release();
      throw error;
    }
    if (!ok) {
      await release();
      const retryAfter = Math.max(1, window.end - window.nowSeconds);
      throw new ApiError(ABUSE_REPORT_RATE_LIMITED, {
        headers: { 'Retry-After': String(retryAfter) },
        details: { limit: counter.scope, max_per_hour: counter.limit, retry_after_seconds: retryAfter },
      });
    }
    taken.push(counter);
  }
  return release;
}

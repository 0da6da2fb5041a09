import { config } from '../config.ts';
import { epochSeconds } from '../db/keys.ts';
import { tryWindowTake } from '../db/rate-window-records.ts';

/**
 * The rate cap: 20 requests per minute per IP address across invoke and poll,
 * a fixed one-minute window counter taken with a conditional ADD.
 */

export const QUEUED_RATE_PER_MINUTE = 20;

/** The spec's 20; FUNCTIONS_QUEUED_RATE_PER_MINUTE raises it for tests that are not about the cap. */
export function queuedRatePerMinute(): number {
  return config.functionsQueuedRatePerMinute();
}

/** Takes one request from the IP's minute; returns null when allowed, else the seconds until the window frees. */
export async function takeQueuedRate(ip: string, now = new Date()): Promise<number | null> {
  const nowSeconds = epochSeconds(now);
  const start = nowSeconds - (nowSeconds % 60);
  if (await tryWindowTake(`fnqueued:ip:${ip || 'unknown'}`, queuedRatePerMinute(), start, start + 120)) return null;
  return Math.max(1, start + 60 - nowSeconds);
}

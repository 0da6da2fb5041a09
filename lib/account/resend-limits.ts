import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { cancellationCodes, isTransactionCanceled } from '../db/errors.ts';
import { EMAIL_RESEND_LIMITED, type SIGN_IN_LINK_LIMITED } from '../errors/catalogue.ts';

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
  const update = (c: HourlyCounter) => ({
    TableName: config.tableName(),
    Key: keys.rateWindow(c.scope, window.start),
    UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
    ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':one': 1, ':limit': c.limit, ':type': 'rate_window', ':ttl': window.end + WINDOW_SECONDS },
  });
  try {
    await dynamo().send(new TransactWriteCommand({ TransactItems: all.map((c) => ({ Update: update(c) })) }));
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    const reasons = cancellationCodes(error);
    const failed = all.filter((_c, i) => reasons[i] === 'ConditionalCheckFailed');
    // No failed condition: DynamoDB cancelled on a write conflict with a racing request; try again a few times.
    if (failed.length === 0 && attempt < 5 && reasons.includes('TransactionConflict')) {
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
    await Promise.all(
      all.map((c) =>
        dynamo().send(
          new UpdateCommand({
            TableName: config.tableName(),
            Key: keys.rateWindow(c.scope, window.start),
            UpdateExpression: 'ADD #count :minusOne',
            ConditionExpression: '#count > :zero',
            ExpressionAttributeNames: { '#count': 'count' },
            ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
          }),
        ),
      ),
    );
  };
}

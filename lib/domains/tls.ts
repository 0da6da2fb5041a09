import { GetQueueAttributesCommand, GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';
import type { DomainRecord } from './domains.ts';
import { getDomainItem, type DomainItem } from './records.ts';
import { claimAttempt, SSL_ERROR_CODES } from './tls-attempts.ts';
import { AttemptFailure, errorName } from './tls-failure.ts';
import { provision, type StepResult } from './tls-provision.ts';
import { claimCheck, writeIfCurrent } from './tls-records.ts';
import { sendSslMessage, type SslMessage } from './tls-queue.ts';
import { type TeardownOutcome, teardownTls } from './tls-teardown.ts';

/**
 * TLS of a verified custom domain: an ACM certificate for the hostname (DNS
 * validation), then the domain's own CloudFront distribution (the spec's
 * dedicated pull zone) serving the hostname with it. Attempts run from the
 * SSL-retries queue (handlers/workers/ssl-retries.ts); POST /domains/{id}/retry-ssl
 * claims one and queues it there (lib/domains/tls-attempts.ts); docs/domains.md
 * tells the whole story. This module runs the attempts and records what came of
 * them; the steps are lib/domains/tls-provision.ts, the teardown of a removed
 * domain lib/domains/tls-teardown.ts.
 */

// The list of ssl_error_code values lives with the claims (retry-ssl's bundle needs one sentence of it).
export { SSL_ERROR_CODES, type SslErrorCode } from './tls-attempts.ts';

type AttemptMessage = Extract<SslMessage, { kind: 'ssl_attempt' | 'ssl_check' }>;

export type AttemptOutcome = 'issued' | 'provisioning' | 'failed' | 'stale';

/** Delay before retry `n` (1 = the first retry): base, doubling, capped (SQS delays at most 900 s). */
export function retryDelaySeconds(n: number, base = config.sslRetryBaseDelaySeconds(), cap = config.sslRetryMaxDelaySeconds()): number {
  return Math.min(cap, 900, base * 2 ** Math.max(0, n - 1));
}

const send = sendSslMessage;

const deadLetterUrls = new Map<string, string>();
/** The dead-letter queue the SSL-retries queue's own redrive policy names (found once per container). */
async function deadLetterQueueUrl(): Promise<string> {
  const source = config.queueUrl('sslRetries');
  const known = deadLetterUrls.get(source);
  if (known) return known;
  const attributes = await sqs().send(new GetQueueAttributesCommand({ QueueUrl: source, AttributeNames: ['RedrivePolicy'] }));
  const arn = (JSON.parse(attributes.Attributes?.RedrivePolicy ?? '{}') as { deadLetterTargetArn?: string }).deadLetterTargetArn;
  if (!arn) throw new Error('The SSL-retries queue has no dead-letter queue');
  const [, , , , account, name] = arn.split(':');
  const { QueueUrl } = await sqs().send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }));
  deadLetterUrls.set(source, QueueUrl!);
  return QueueUrl!;
}

/**
 * Runs one step for a claimed attempt and records what came of it:
 * - issued: `issued`, `ssl_issued_at`;
 * - still validating: stays `provisioning`, and a look again is queued;
 * - failed: `failed` with `ssl_error_code` and `ssl_error`; the next attempt of
 *   the chain is queued with a growing delay (`next_retry_at`), or after the
 *   last one the message goes to the dead-letter queue.
 * Every write is conditional on the attempt still being the domain's latest.
 */
async function runStep(claimed: DomainItem, chain: number, now: Date, check = 0): Promise<AttemptOutcome> {
  const record = claimed as unknown as DomainRecord;
  const attempts = record.ssl_attempts;
  let result: StepResult;
  try {
    result = await provision(record);
  } catch (caught) {
    // An error of no known kind still ends the attempt as a failure, so the chain goes on: left to SQS, the
    // redelivered message would find its own claim and be dropped as stale, and the domain would stay provisioning.
    const error = caught instanceof AttemptFailure ? caught : new AttemptFailure('PROVISIONING_INTERRUPTED', errorName(caught));
    if (!(caught instanceof AttemptFailure))
      logger.error('ssl attempt interrupted', { domain_id: record.id, error: errorName(caught), message: (caught as Error)?.message });
    const message = error.detail ? `${SSL_ERROR_CODES[error.code]} (${error.detail})` : SSL_ERROR_CODES[error.code];
    const at = new Date().toISOString();
    let nextRetryAt: string | null = null;
    const next: AttemptMessage = { kind: 'ssl_attempt', domain_id: record.id, seen_attempts: attempts, chain: chain + 1 };
    // The message first: a failed send throws and the current message is retried; a queued retry whose write then loses is stale and dropped.
    if (chain < config.sslMaxAttempts()) {
      const delay = retryDelaySeconds(chain);
      await send(next, delay);
      nextRetryAt = new Date(Date.now() + delay * 1000).toISOString();
    } else {
      await sqs().send(
        new SendMessageCommand({
          QueueUrl: await deadLetterQueueUrl(),
          MessageBody: JSON.stringify({ ...next, chain, ssl_error_code: error.code, ssl_error: message }),
        }),
      );
    }
    const written = await writeIfCurrent(
      record.id,
      attempts,
      {
        ssl_status: 'failed',
        ssl_error: message,
        ssl_error_code: error.code,
        ssl_next_retry_at: nextRetryAt,
        updated_at: at,
      },
      { notIssued: true },
    );
    logger.info('ssl attempt failed', {
      domain_id: record.id,
      attempt: attempts,
      chain,
      code: error.code,
      detail: error.detail,
      next_retry_at: nextRetryAt,
    });
    return written ? 'failed' : 'stale';
  }
  if (result.kind === 'pending') {
    await send(
      { kind: 'ssl_check', domain_id: record.id, seen_attempts: attempts, chain, check: check + 1 },
      config.sslCheckIntervalSeconds(),
    );
    return 'provisioning';
  }
  const at = new Date().toISOString();
  const written = await writeIfCurrent(record.id, attempts, {
    ssl_status: 'issued',
    ssl_issued_at: at,
    ssl_error: null,
    ssl_error_code: null,
    ssl_next_retry_at: null,
    updated_at: at,
  });
  logger.info('ssl issued', { domain_id: record.id, attempt: attempts });
  return written ? 'issued' : 'stale';
}

/**
 * A new attempt on the domain as `item` shows it: claimed (one of racing
 * claims wins; the others are 'stale'), then run. `chain` is its number in
 * its automatic chain (1 for the first after verification; retry-ssl claims
 * attempt 1 of its chain itself, in lib/domains/tls-attempts.ts).
 */
export async function attemptTls(item: DomainItem, chain = 1, now = new Date()): Promise<{ outcome: AttemptOutcome; item: DomainItem }> {
  const claimed = await claimAttempt(item, now);
  if (!claimed) return { outcome: 'stale', item: (await getDomainItem(item.id)) ?? item };
  const outcome = await runStep(claimed, chain, now);
  return { outcome, item: (await getDomainItem(item.id)) ?? claimed };
}

/** What the worker does with one message of the SSL-retries queue. */
export async function handleSslMessage(message: SslMessage, now = new Date()): Promise<AttemptOutcome | TeardownOutcome | 'gone'> {
  if (message.kind === 'ssl_teardown') return teardownTls(message.domain_id);
  const item = await getDomainItem(message.domain_id);
  if (!item || item.deleted_at || item.status !== 'verified') return 'gone';
  // A retry-ssl or another message moved the domain on since this one was sent.
  if (Number(item.ssl_attempts ?? 0) !== message.seen_attempts || item.ssl_status === 'issued') return 'stale';
  if (message.kind === 'ssl_check') {
    if (item.ssl_status !== 'provisioning') return 'stale';
    const check = message.check ?? 1;
    const claimed = await claimCheck(message.domain_id, message.seen_attempts, check);
    if (!claimed) return 'stale';
    return runStep(claimed, message.chain, now, check);
  }
  return (await attemptTls(item, message.chain, now)).outcome;
}

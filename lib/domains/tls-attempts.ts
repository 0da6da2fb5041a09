import { logger } from '../logger.ts';
import { getDomainItem, type DomainItem } from './records.ts';
import { sendSslMessage } from './tls-queue.ts';
import { writeIfCurrent } from './tls-records.ts';

/**
 * The table side of TLS attempts: claiming one, the writes conditional on it
 * still being the domain's latest, and POST /domains/{id}/retry-ssl, which
 * claims an attempt and queues its work. Kept apart from lib/domains/tls.ts
 * (which makes the attempts' ACM, CloudFront and Route 53 calls) so that the
 * retry-ssl handler bundles no AWS client but DynamoDB's.
 */

/**
 * The one documented list of `ssl_error_code` values (docs/domains.md, "TLS").
 * Each is a reason a client can give specific guidance for.
 */
export const SSL_ERROR_CODES = {
  /** The certificate's DNS validation did not complete within the deadline (ours, or ACM's own). */
  VALIDATION_TIMED_OUT: 'The certificate could not be validated in time: the validation CNAME record was not found in DNS.',
  /** ACM refused to issue: a CAA record of the domain does not allow Amazon to issue certificates. */
  CAA_ERROR: "The domain's CAA records do not allow Amazon to issue a certificate for it.",
  /** ACM refused to issue for another reason (a domain it does not allow, one needing extra verification ...). */
  CERTIFICATE_REFUSED: 'The certificate authority refused to issue a certificate for this hostname.',
  /** Too many certificates requested from ACM; the next attempt may succeed. */
  CERTIFICATE_LIMIT_EXCEEDED: 'The certificate quota was reached; the request will be tried again.',
  /** ACM could not take the certificate request (rejected, or unavailable). */
  CERTIFICATE_REQUEST_FAILED: 'The certificate could not be requested.',
  /** CloudFront already serves this hostname from another distribution (of another account). */
  HOSTNAME_IN_USE: 'Another CDN distribution already serves this hostname.',
  /** CloudFront refused or failed to create the domain's distribution. */
  DISTRIBUTION_FAILED: "The domain's CDN distribution could not be created.",
  /** managed_dns: a record could not be written to the domain's hosted zone. */
  DNS_RECORD_FAILED: "A record could not be written to the domain's managed DNS zone.",
  /** Something of ours failed mid-attempt (the table, a throttled call): nothing about the domain; the retry usually succeeds. */
  PROVISIONING_INTERRUPTED: 'The attempt was interrupted by an error on our side; it will be tried again.',
} as const;
export type SslErrorCode = keyof typeof SSL_ERROR_CODES;

/**
 * Claims a new attempt: ssl_attempts goes up by one, conditionally on the
 * count the caller saw, so of two claims from the same state (a redelivered
 * message, racing retries) exactly one wins. Returns the claimed item, or null.
 */
export async function claimAttempt(item: DomainItem, now: Date): Promise<DomainItem | null> {
  const at = now.toISOString();
  return writeIfCurrent(
    item.id,
    Number(item.ssl_attempts ?? 0),
    {
      ssl_status: 'provisioning',
      ssl_last_attempt_at: at,
      ssl_provisioning_started_at: item.ssl_provisioning_started_at ?? at,
      ssl_error: null,
      ssl_error_code: null,
      ssl_next_retry_at: null,
      // The looks of a new attempt count from 1 again.
      ssl_check_seq: 0,
      updated_at: at,
    },
    { add: true, notIssued: true },
  );
}

/**
 * POST retry-ssl: claims attempt 1 of a new chain here, so the reply shows it
 * (`provisioning`, the new `ssl_attempts`) and any retry an earlier chain
 * queued is stale from now on; its work (the certificate, the distribution)
 * is the SSL-retries worker's, queued with no delay as the attempt's first
 * look. The spec shows no state after the call, and the worker already makes
 * every other attempt, so the route holds no ACM, CloudFront or Route 53
 * client. Claiming before queueing: a look sent first could reach the worker
 * before the claim and be dropped as stale. `outcome` is 'stale' when a
 * racing call (or the worker) claimed first; the item is then the domain as
 * it stands.
 */
export async function retrySsl(item: DomainItem, now = new Date()): Promise<{ outcome: 'queued' | 'stale'; item: DomainItem }> {
  const claimed = await claimAttempt(item, now);
  if (!claimed) return { outcome: 'stale', item: (await getDomainItem(item.id)) ?? item };
  const attempts = Number(claimed.ssl_attempts);
  try {
    await sendSslMessage({ kind: 'ssl_check', domain_id: item.id, seen_attempts: attempts, chain: 1, check: 1 }, 0);
  } catch (error) {
    // Nothing will make this attempt: end it as failed (no retry queued) so the domain does not sit in
    // `provisioning`, and a later retry-ssl may start again. The caller answers 500.
    const at = new Date().toISOString();
    await writeIfCurrent(
      item.id,
      attempts,
      {
        ssl_status: 'failed',
        ssl_error: SSL_ERROR_CODES.PROVISIONING_INTERRUPTED,
        ssl_error_code: 'PROVISIONING_INTERRUPTED',
        ssl_next_retry_at: null,
        updated_at: at,
      },
      { notIssued: true },
    ).catch((cause: unknown) =>
      logger.error('ssl retry: the unqueued attempt was not marked failed', { domain_id: item.id, error: (cause as Error)?.name }),
    );
    throw error;
  }
  return { outcome: 'queued', item: claimed };
}

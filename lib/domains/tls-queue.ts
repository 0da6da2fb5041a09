import { sendMessage } from '../aws/sqs-lite.ts';
import { config } from '../config.ts';
import type { DomainItem } from './records.ts';

/**
 * The messages of the SSL-retries queue, and sending them. Kept apart from
 * lib/domains/tls.ts so that verify and remove, which only queue work, do not
 * bundle the ACM and CloudFront clients.
 */
export type SslMessage =
  | {
      /** Run attempt number `chain` of an automatic chain, or (ssl_check) look again at a pending one. */
      kind: 'ssl_attempt' | 'ssl_check';
      domain_id: string;
      /** The domain's ssl_attempts when the message was sent: a newer attempt makes the message stale. */
      seen_attempts: number;
      /** 1-based number of the attempt within its automatic chain (retries count from the first). */
      chain: number;
      /** ssl_check: 1-based number of the look within its attempt; of two deliveries of one look, one runs. */
      check?: number;
    }
  | {
      /** A removed domain's distribution is disabled, then deleted with its certificate. */
      kind: 'ssl_teardown';
      domain_id: string;
    };

export async function sendSslMessage(message: SslMessage, delaySeconds: number): Promise<void> {
  await sendMessage({
    queueUrl: config.queueUrl('sslRetries'),
    body: JSON.stringify(message),
    delaySeconds: Math.min(900, Math.max(0, Math.round(delaySeconds))),
  });
}

/** Queues the first attempt of a freshly verified domain; the worker runs it at once. */
export async function queueFirstAttempt(item: DomainItem): Promise<void> {
  await sendSslMessage({ kind: 'ssl_attempt', domain_id: item.id, seen_attempts: Number(item.ssl_attempts ?? 0), chain: 1 }, 0);
}

/** Queues the teardown of a removed domain's distribution and certificate. */
export async function queueTeardown(domainId: string): Promise<void> {
  await sendSslMessage({ kind: 'ssl_teardown', domain_id: domainId }, 0);
}

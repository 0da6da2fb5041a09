import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { handleSslMessage, type SslMessage } from '../../lib/domains/tls.ts';
import { logger } from '../../lib/http/logger.ts';

/**
 * Consumer of the SSL-retries queue: each message is one TLS attempt of a
 * verified domain, or a look at one whose certificate awaits validation
 * (lib/domains/tls.ts). Retries with growing delays are new messages the
 * attempt queues itself; a message that throws (AWS unreachable) is retried
 * by SQS and, past maxReceiveCount, lands in the dead-letter queue.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as Partial<SslMessage>;
      if (
        (message.kind !== 'ssl_attempt' && message.kind !== 'ssl_check') ||
        typeof message.domain_id !== 'string' ||
        !Number.isInteger(message.seen_attempts) ||
        !Number.isInteger(message.chain)
      ) {
        logger.error('ssl-retries: a message of no known kind is dropped', { body: record.body });
        continue;
      }
      const outcome = await handleSslMessage(message as SslMessage);
      logger.info('ssl attempt', { domain_id: message.domain_id, kind: message.kind, chain: message.chain, outcome });
    } catch (error) {
      logger.error('ssl attempt errored; SQS retries it', error as Error);
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

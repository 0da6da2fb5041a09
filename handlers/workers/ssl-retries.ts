import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { handleSslMessage } from '../../lib/domains/tls.ts';
import type { SslMessage } from '../../lib/domains/tls-queue.ts';
import { logger } from '../../lib/logger.ts';
import { type JsonObject } from '../../lib/json.ts';

/**
 * Consumer of the SSL-retries queue: each message is one TLS attempt of a
 * verified domain, a look at one whose certificate awaits validation, or the
 * teardown of a removed domain's distribution and certificate
 * (lib/domains/tls.ts). Retries with growing delays are new messages the
 * attempt queues itself; a message that throws (AWS unreachable) is retried
 * by SQS and, past maxReceiveCount, lands in the dead-letter queue.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as Partial<JsonObject>;
      const known =
        typeof message.domain_id === 'string' &&
        (message.kind === 'ssl_teardown' ||
          ((message.kind === 'ssl_attempt' || message.kind === 'ssl_check') &&
            Number.isInteger(message.seen_attempts) &&
            Number.isInteger(message.chain)));
      if (!known) {
        logger.error('ssl-retries: a message of no known kind is dropped', { body: record.body });
        continue;
      }
      const outcome = await handleSslMessage(message as unknown as SslMessage);
      logger.info('ssl message', { domain_id: message.domain_id, kind: message.kind, chain: message.chain, outcome });
    } catch (error) {
      logger.error('ssl attempt errored; SQS retries it', error as Error);
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

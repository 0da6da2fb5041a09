import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { applyGeoPolicy } from '../../lib/domains/geo.ts';
import { logger } from '../../lib/logger.ts';

/**
 * Consumer of the geo-filters queue: one message per domain whose saved geo
 * policy CloudFront did not take. Applies the domain's current policy (not
 * the one of the moment the message was sent); a failure is retried by SQS.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as { kind?: string; domain_id?: string };
      if (message.kind !== 'geo_policy' || typeof message.domain_id !== 'string') {
        logger.error('geo-filters: a message of no known kind is dropped', { body: record.body });
        continue;
      }
      const result = await applyGeoPolicy(message.domain_id);
      logger.info('geo policy retry', { domain_id: message.domain_id, outcome: result.outcome });
    } catch (error) {
      logger.error('geo policy retry failed; SQS retries it', error as Error);
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

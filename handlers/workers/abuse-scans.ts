import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { runAbuseScan } from '../../lib/abuse/scans.ts';
import { logger } from '../../lib/logger.ts';

/** Consumer of the abuse-scans queue: one message per publish's scan; a scan that fails is retried by SQS. */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as { scan_id?: unknown };
      if (typeof message.scan_id !== 'string') {
        logger.error('abuse-scans: a message without a scan id is dropped', { body: record.body });
        continue;
      }
      const outcome = await runAbuseScan(message.scan_id);
      logger.info('abuse scan', { scan_id: message.scan_id, outcome });
    } catch (error) {
      logger.error('abuse scan failed; SQS retries it', error as Error);
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../lib/logger.ts';
import type { CaptureMessage } from '../../lib/screenshots/jobs.ts';
import { captureJob } from '../../lib/screenshots/capture.ts';
import { config } from '../../lib/config.ts';

/**
 * Consumer of the screenshots queue: one capture job per message, reported
 * through the public result endpoint at `API_BASE_URL` with the job's token
 * (so this worker touches no table or bucket). In the cloud it runs in its
 * container image (lib/screenshots/image); locally lib/local/capture-driver.ts
 * plays the queue. A capture whose report could not land is retried by SQS.
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  const apiBaseUrl = config.apiBaseUrl();
  for (const record of event.Records) {
    let message: CaptureMessage;
    try {
      message = JSON.parse(record.body) as CaptureMessage;
    } catch {
      logger.error('screenshots-capture: a message that is not JSON is dropped', { body: record.body.slice(0, 200) });
      continue;
    }
    if (
      typeof message?.job_id !== 'string' ||
      typeof message.token !== 'string' ||
      typeof message.url !== 'string' ||
      typeof message.upload_path !== 'string'
    ) {
      // Retrying a message without a job, token, page or report path cannot make it one.
      logger.error('screenshots-capture: a message without job_id, token, url and upload_path is dropped', { job_id: message?.job_id });
      continue;
    }
    try {
      const status = await captureJob(message, apiBaseUrl);
      // 401 (job expired) and 409 (already reported) are final: retrying cannot change them.
      if (status >= 500 || status === 429) throw new Error(`the result endpoint answered ${status}`);
      logger.info('screenshot captured', { job_id: message.job_id, report_status: status });
    } catch (error) {
      logger.warn('screenshot capture failed; the queue retries it', { job_id: message.job_id, error: String(error) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

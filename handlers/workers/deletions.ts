import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../../lib/logger.ts';
import { deleteProject } from '../../lib/lifecycle/project-deletion.ts';

/** Consumer of the deletions queue: one message per project to remove; a failed one is retried by SQS. */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as { kind?: string; project_id?: string };
      if (message.kind !== 'project' || typeof message.project_id !== 'string') {
        logger.error('deletions: a message of no known kind is dropped', { body: record.body });
        continue;
      }
      const outcome = await deleteProject(message.project_id);
      logger.info('project deletion', { project_id: message.project_id, outcome });
    } catch (error) {
      logger.error('project deletion failed; SQS retries it', error as Error);
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

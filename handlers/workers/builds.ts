import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createCloudBuildHost } from '../../lib/builds/cloud-host.ts';
import type { BuildMessage } from '../../lib/builds/enqueue.ts';
import { buildHost, type BuildHost } from '../../lib/builds/host.ts';
import { handleBuildMessage } from '../../lib/builds/run.ts';
import { loadSecrets } from '../../lib/aws/secrets.ts';
import { logger } from '../../lib/logger.ts';

// Environment variables are decrypted for a build; a forge token is signed with the Git state secret.
await loadSecrets(['envEncryption', 'gitState']);

/**
 * The builds queue's consumer (lib/workers.ts row `builds`): each message
 * starts or follows one build (lib/builds/run.ts). A message whose handling
 * failed on a table, bucket or host error comes back after the visibility
 * timeout; the build's conditional writes make a repeat harmless.
 */
let cloud: BuildHost | null = null;

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const host = buildHost(() => (cloud ??= createCloudBuildHost()));
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      let message: BuildMessage;
      try {
        message = JSON.parse(record.body) as BuildMessage;
      } catch {
        logger.warn('builds queue: a message that is not JSON was dropped', { message_id: record.messageId });
        return;
      }
      if (
        (message.kind !== 'start' && message.kind !== 'follow') ||
        typeof message.project_id !== 'string' ||
        typeof message.deployment_id !== 'string'
      ) {
        logger.warn('builds queue: a message without a build was dropped', { message_id: record.messageId });
        return;
      }
      try {
        await handleBuildMessage(message, host);
      } catch (error) {
        logger.error('builds worker failed', { deployment_id: message.deployment_id, error: (error as Error).message });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
};

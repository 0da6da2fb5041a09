import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../logger.ts';
import type { BuildMessage } from './enqueue.ts';
import type { BuildHost } from './host.ts';
import { handleBuildMessage } from './run.ts';

/**
 * The builds queue's consumer (lib/workers.ts row `builds`) on the build host it is given: the deployed
 * worker passes the CodeBuild host (handlers/workers/builds.ts), the local platform its sandboxed one
 * (lib/local/builds/builds-runtime.ts). Each message starts or follows one build (lib/builds/run.ts). A
 * message whose handling failed on a table, bucket or host error comes back after the visibility timeout;
 * the build's conditional writes make a repeat harmless.
 */
export function buildsWorker(hostOf: () => BuildHost): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const host = hostOf();
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
}

import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { handleQueueBatch } from '../queue-batch.ts';
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
    return handleQueueBatch<BuildMessage>(event, {
      queue: 'builds',
      read: (body) => (isBuildMessage(body) ? { message: body } : { lacks: 'without a build' }),
      handle: async (message) => {
        await handleBuildMessage(message, host);
        return 'done';
      },
      failure: (message) => ['builds worker failed', { deployment_id: message.deployment_id }],
    });
  };
}

function isBuildMessage(body: unknown): body is BuildMessage {
  const message = body as Partial<BuildMessage> | null;
  return (
    typeof message === 'object' &&
    message !== null &&
    (message.kind === 'start' || message.kind === 'follow') &&
    typeof message.project_id === 'string' &&
    typeof message.deployment_id === 'string'
  );
}

import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { loadSecrets } from '../../lib/aws/secrets.ts';
import { deliverCallbackAttempt, readCallbackMessage } from '../../lib/functions/callbacks.ts';
import { handleQueueBatch } from '../../lib/queue-batch.ts';

// The callback secret is sealed with the environment variables' key.
await loadSecrets(['envEncryption']);

/**
 * Consumer of the callbacks queue (lib/workers.ts row `function-callbacks`): each message is one attempt of a
 * completion callback (lib/functions/callbacks.ts), which queues the next attempt itself when the receiver answers
 * no 2xx. A message that throws (the table or the queue unreachable) is retried by SQS, then rests in the
 * dead-letter queue.
 */
export const handler = (event: SQSEvent): Promise<SQSBatchResponse> =>
  handleQueueBatch(event, {
    queue: 'callbacks',
    read: readCallbackMessage,
    handle: async (message) => {
      await deliverCallbackAttempt(message);
      return 'done';
    },
    failure: (message) => ['completion callback attempt failed', { invocation_id: message.invocation_id, attempt: message.attempt }],
  });

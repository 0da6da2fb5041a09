import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';

/** One completion callback attempt on the callbacks queue (lib/functions/callbacks.ts delivers it). */
export interface CallbackMessage {
  invocation_id: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** Queues attempt `attempt` of an invocation's callback, due in `delaySeconds` (an SQS message delay, at most 900). */
export async function queueCallbackAttempt(invocationId: string, attempt: number, delaySeconds: number): Promise<void> {
  const message: CallbackMessage = { invocation_id: invocationId, attempt };
  await sqs().send(
    new SendMessageCommand({ QueueUrl: config.queueUrl('callbacks'), MessageBody: JSON.stringify(message), DelaySeconds: delaySeconds }),
  );
}

/** The invocation has ended either way; a callback whose first message could not be queued is only logged. */
export function logCallbackLost(invocationId: string, error: Error): void {
  logger.error('completion callback could not be queued', { invocation_id: invocationId, error: error.message });
}

import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sendMessage } from '../aws/sqs-lite.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';
import { handleQueueBatch } from '../queue-batch.ts';
import type { FunctionHost } from './host.ts';
import { listFunctionRecords } from './records.ts';

/**
 * Functions prepared at publish: once a publish has committed, one message per deployment with functions goes to
 * the function-lambdas queue, and its worker asks the host to make each function ready (the cloud host's Lambda:
 * created, tagged, Active), so the first request does not wait for CreateFunction and the VPC attachment. A
 * Lambda that returned its response is frozen, so this is another invocation, not work left running after the
 * publish. Nothing depends on it: the first request still makes a Lambda that is missing (the fallback), so
 * promote and rollback stay pointer moves.
 */

interface PrepareMessage {
  project_id: string;
  deployment_id: string;
}

/** Queues the preparation of a committed deployment's functions; a failure is logged, never the publish's. */
export async function queueFunctionLambdas(message: PrepareMessage): Promise<void> {
  try {
    await sendMessage({ queueUrl: config.queueUrl('functionLambdas'), body: JSON.stringify(message) });
  } catch (error) {
    logger.warn('function Lambdas not queued for preparation; the first request makes them', { ...message, error: String(error) });
  }
}

/**
 * The function-lambdas queue's consumer (lib/workers.ts) on the host it is given: the deployed worker passes the
 * cloud host's preparation (handlers/workers/function-lambdas.ts); the local host has none (its instances start on
 * demand), so the source mode reads the message and has nothing to do. A deployment whose preparation failed is
 * a batch item failure: SQS tries it again, then keeps it in the dead-letter queue.
 */
export function functionLambdasWorker(hostOf: () => Pick<FunctionHost, 'prepareHttp'>): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return (event) =>
    handleQueueBatch<PrepareMessage>(event, {
      queue: 'function-lambdas',
      read: (body) => {
        const message = (body ?? {}) as Partial<PrepareMessage>;
        return typeof message.project_id === 'string' && typeof message.deployment_id === 'string'
          ? { message: { project_id: message.project_id, deployment_id: message.deployment_id } }
          : { lacks: 'without a deployment' };
      },
      handle: async (message) => {
        const prepare = hostOf().prepareHttp;
        if (!prepare) return 'done';
        const functions = await listFunctionRecords(message.project_id, message.deployment_id);
        await Promise.all(functions.map((fn) => prepare(fn)));
        logger.info('function Lambdas prepared', { ...message, count: functions.length });
        return 'done';
      },
      failure: (message) => ['function Lambdas not prepared; SQS retries', { ...message }],
    });
}

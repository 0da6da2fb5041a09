import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../logger.ts';
import type { FunctionHost } from './host.ts';
import { runInvocation } from './queued.ts';
import { FunctionTelemetry } from './telemetry.ts';

/**
 * The invocations queue's consumer (lib/workers.ts row `function-invocations`) on the host it is given: the
 * deployed worker passes the cloud host (handlers/workers/function-invocations.ts), the local platform its
 * sandboxed one (lib/local/queued-runtime.ts). Each message names one invocation; lib/functions/queued.ts
 * claims and runs it at most once. A message whose run was stopped by a platform shutdown, or that failed on a
 * table or bucket error, is reported as a batch item failure and comes back (a redelivery never runs a claimed
 * invocation again).
 */
export function invocationsWorker(hostOf: () => FunctionHost): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const telemetry = new FunctionTelemetry();
  return async (event) => {
    const host = hostOf();
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    await Promise.all(
      event.Records.map(async (record) => {
        let id: unknown;
        try {
          id = (JSON.parse(record.body) as { invocation_id?: unknown }).invocation_id;
        } catch {
          id = undefined;
        }
        if (typeof id !== 'string') {
          logger.warn('invocations queue: a message without an invocation id was dropped', { message_id: record.messageId });
          return;
        }
        try {
          if ((await runInvocation(id, { host, telemetry })) === 'aborted') failures.push({ itemIdentifier: record.messageId });
        } catch (error) {
          logger.error('invocation worker failed', { invocation_id: id, error: (error as Error).message });
          failures.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    // A Lambda container may be frozen after the reply: no timer flushes for it.
    await telemetry.flush();
    return { batchItemFailures: failures };
  };
}

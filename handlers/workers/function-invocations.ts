import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createCloudFunctionHost } from '../../lib/functions/hosts/cloud/cloud-host.ts';
import type { FunctionHost } from '../../lib/functions/host.ts';
import { queuedFunctionHost } from '../../lib/functions/queued-host.ts';
import { runInvocation } from '../../lib/functions/queued.ts';
import { FunctionTelemetry } from '../../lib/functions/telemetry.ts';
import { logger } from '../../lib/logger.ts';

/**
 * The invocations queue's consumer (lib/workers.ts row `function-invocations`):
 * each message names one invocation; lib/functions/queued.ts claims and runs
 * it at most once. A message whose run was stopped by a platform shutdown,
 * or that failed on a table or bucket error, is reported as a batch item
 * failure and comes back (a redelivery never runs a claimed invocation again).
 */
let cloud: FunctionHost | null = null;
const telemetry = new FunctionTelemetry();

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const host = queuedFunctionHost(() => (cloud ??= createCloudFunctionHost()));
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

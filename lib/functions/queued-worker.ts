import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { handleQueueBatch } from '../queue-batch.ts';
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
export function invocationsWorker(
  hostOf: () => FunctionHost,
  options: {
    /**
     * Counts kept by a process that lives on (the local platform), which writes them on its timer and at its stop.
     * Without it the worker writes its own before it answers: two table writes per batch.
     */
    telemetry?: FunctionTelemetry;
  } = {},
): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const telemetry = options.telemetry ?? new FunctionTelemetry();
  return async (event) => {
    const host = hostOf();
    const answer = await handleQueueBatch<string>(event, {
      queue: 'invocations',
      read: (body) => {
        const id = (body as { invocation_id?: unknown } | null)?.invocation_id;
        return typeof id === 'string' ? { message: id } : { lacks: 'without an invocation id' };
      },
      handle: async (id) => ((await runInvocation(id, { host, telemetry })) === 'aborted' ? 'again' : 'done'),
      failure: (id) => ['invocation worker failed', { invocation_id: id }],
    });
    // A Lambda container may be frozen after the reply: no timer flushes for it.
    if (!options.telemetry) await telemetry.flush();
    return answer;
  };
}

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import type { FunctionHost } from '../functions/host.ts';
import { reclaimOpenInvocations, requeuePendingInvocations } from '../functions/invocation-reclaim.ts';
import type { DeployedFunction } from '../functions/model.ts';
import { invocationsWorker } from '../functions/queued-worker.ts';
import { FunctionTelemetry } from '../functions/telemetry.ts';
import { functionLambdasWorker } from '../functions/prepare-lambdas.ts';
import { logger } from '../logger.ts';
import { createLocalFunctionHost, type LocalFunctionHost } from '../functions/hosts/local/local-host.ts';
import type { LocalDriver } from './driver.ts';
import { queueDriver, type QueueDriver, type QueueDriverOptions } from './queue-driver.ts';

async function loadBundle(fn: DeployedFunction): Promise<Buffer> {
  const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: fn.bundle_key }));
  return Buffer.from(await reply.Body!.transformToByteArray());
}

/**
 * The local platform's queued door: the invocations worker on a sandboxed host
 * (a runner process of its own per invocation, taken from a few started
 * ahead of need: FUNCTIONS_QUEUED_PREFORK; the host is made on the first run),
 * reclaims what a stopped platform left running, queues again what it left
 * pending, then plays the queues' event source mappings. Stopping aborts the
 * runs in progress: they stay `running` and the next start reclaims them.
 */
export function queuedRuntime(
  options: QueueDriverOptions & {
    /** What the worker runs on instead of the sandboxed host itself (tests wrap it). */
    host?: (sandboxed: FunctionHost) => FunctionHost;
  } = {},
): LocalDriver & Pick<QueueDriver, 'idle' | 'pause' | 'resume'> & { reclaimed: Promise<number> } {
  let host: LocalFunctionHost | null = null;
  const ensure = () => (host ??= createLocalFunctionHost({ loadBundle, prefork: config.functionsQueuedPrefork() }));
  const lazy: FunctionHost = {
    forwardHttp: (fn, request, signal) => ensure().forwardHttp(fn, request, signal),
    runQueued: (fn, request, budgetMs, signal) => ensure().runQueued(fn, request, budgetMs, signal),
  };
  // Written every few seconds and at the stop, not after each invocation as the deployed worker must.
  const telemetry = new FunctionTelemetry();
  const worker = invocationsWorker(() => options.host?.(lazy) ?? lazy, { telemetry });
  // The local host prepares nothing at publish: the message is read and acknowledged, as the cloud's worker reads it.
  const prepare = functionLambdasWorker(() => lazy);
  const queues = queueDriver({
    ...options,
    handlers: { ...options.handlers, 'function-invocations': async () => worker, 'function-lambdas': async () => prepare },
  });
  let resolveReclaimed: (n: number) => void = () => {};
  const reclaimed = new Promise<number>((resolve) => (resolveReclaimed = resolve));
  let starting: Promise<void> = Promise.resolve();
  let stopped = false;
  return {
    name: 'queued-functions',
    reclaimed,
    start() {
      starting = (async () => {
        let count = 0;
        try {
          // A run the stop cut short ends with the restart sentence; a call still waiting runs now.
          count = await reclaimOpenInvocations((record) => record.status === 'running');
          if (count > 0) logger.warn('reclaimed queued invocations a stopped platform left running', { count });
          const waiting = await requeuePendingInvocations();
          if (waiting > 0) logger.info('queued invocations a stopped platform left pending run now', { count: waiting });
        } catch (error) {
          logger.error('reclaiming open invocations failed', { error: (error as Error).message });
        }
        resolveReclaimed(count);
        if (!stopped) {
          telemetry.start();
          queues.start();
        }
      })();
    },
    idle: () => queues.idle(),
    pause: () => queues.pause(),
    resume: () => queues.resume(),
    async stop() {
      stopped = true;
      await starting;
      // The queues stop receiving at once; the host aborts the runs in progress.
      await Promise.all([queues.stop(), host?.stop()]);
      await telemetry.stop();
    },
  };
}

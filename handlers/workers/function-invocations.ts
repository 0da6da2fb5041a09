import type { FunctionHost } from '../../lib/functions/host.ts';
import { createCloudFunctionHost } from '../../lib/functions/hosts/cloud/cloud-host.ts';
import { invocationsWorker } from '../../lib/functions/queued-worker.ts';

/**
 * The invocations queue's consumer in the stack (lib/workers.ts row `function-invocations`): the worker of
 * lib/functions/queued-worker.ts on the cloud host, which runs each invocation in a Fargate task of the runner.
 * The local platform runs the same worker on its sandboxed host (lib/local/queued-runtime.ts).
 */
let cloud: FunctionHost | null = null;

export const handler = invocationsWorker(() => (cloud ??= createCloudFunctionHost()));

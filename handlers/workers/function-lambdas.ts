import { prepareFunctionLambda } from '../../lib/functions/hosts/cloud/lambda-prepare.ts';
import { functionLambdasWorker } from '../../lib/functions/prepare-lambdas.ts';

/**
 * The function-lambdas queue's consumer in the stack (lib/workers.ts row `function-lambdas`): the worker of
 * lib/functions/prepare-lambdas.ts with the cloud host's preparation of a function's Lambda, the same code the
 * router runs when a request finds the Lambda missing. Only that part of the cloud host is imported, so the
 * bundle carries no ECS client. The local platform runs the same worker on its sandboxed host (lib/local/queued-runtime.ts).
 */
export const handler = functionLambdasWorker(() => ({ prepareHttp: prepareFunctionLambda }));

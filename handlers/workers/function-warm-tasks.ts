import { config } from '../../lib/config.ts';
import { keepWarmPool } from '../../lib/functions/hosts/cloud/warm-tasks.ts';

/**
 * Target of the recurring schedule (row `function-warm-tasks` of lib/workers.ts): keeps the cloud host's warm pool
 * of blank runner tasks full (lib/functions/hosts/cloud/warm-tasks.ts) where the stack sets its size
 * (FUNCTIONS_WARM_TASKS, from the `functionsWarmTasks` context); with no pool it does nothing.
 */
export const handler = async (): Promise<{ cleared: number; started: number }> => keepWarmPool(config.functionsWarmTasks());

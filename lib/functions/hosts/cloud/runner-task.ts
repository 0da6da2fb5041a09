import { ECSClient, RunTaskCommand } from '@aws-sdk/client-ecs';
import { lazyClient } from '../../../aws/clients.ts';
import { cloudHostVariables, variable } from './variables.ts';

// Starting a task of the runner's task definition: an invocation's own (queued-task.ts) or a blank one of the warm
// pool (warm-tasks.ts).

/** The runner's container in the task definition (infra/functions-runtime.ts). */
export const RUNNER_CONTAINER_NAME = 'runner';

/** RunTask refuses overrides longer than this (the JSON of the override structure included). */
export const MAX_OVERRIDE_CHARS = 8192;

export type TaskEnvironment = { name: string; value: string }[];

export const ecs = lazyClient('ecs', (opts) => new ECSClient({ region: opts.region, endpoint: opts.endpoint }));

/**
 * Starts one task of the runner's task definition with these variables: its ARN. With a `capacityProvider` (the warm
 * pool's blank tasks: FARGATE_SPOT) on that provider of the cluster, else on on-demand Fargate.
 */
export async function runRunnerTask(environment: TaskEnvironment, startedBy: string, capacityProvider?: string): Promise<string> {
  const overrides = { containerOverrides: [{ name: RUNNER_CONTAINER_NAME, environment }] };
  const overrideChars = JSON.stringify(overrides).length;
  if (overrideChars > MAX_OVERRIDE_CHARS)
    throw new Error(`the task overrides are ${overrideChars} characters, over RunTask's ${MAX_OVERRIDE_CHARS}`);
  const started = await ecs().send(
    new RunTaskCommand({
      cluster: variable(cloudHostVariables.taskCluster),
      taskDefinition: variable(cloudHostVariables.taskDefinitionArn),
      ...(capacityProvider ? { capacityProviderStrategy: [{ capacityProvider, weight: 1 }] } : { launchType: 'FARGATE' }),
      count: 1,
      // At most 36 characters: an invocation id fits, and tells operators which invocation a task ran.
      startedBy: startedBy.slice(0, 36),
      networkConfiguration: {
        awsvpcConfiguration: {
          subnets: variable(cloudHostVariables.subnetIds).split(','),
          securityGroups: [variable(cloudHostVariables.securityGroupId)],
          assignPublicIp: 'DISABLED',
        },
      },
      overrides,
    }),
  );
  const task = started.tasks?.[0];
  if (!task?.taskArn) {
    const failure = started.failures?.map((f) => `${f.reason ?? 'unknown'}${f.detail ? ` (${f.detail})` : ''}`).join('; ');
    throw new Error(`RunTask started no task: ${failure || 'no reason given'}`);
  }
  return task.taskArn;
}

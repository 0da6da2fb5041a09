import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { ResourceUse } from '../lib/http/routes.ts';
import { queueDefinitions } from '../lib/resources.ts';
import { rateExpression, workers, type WorkerRow } from '../lib/workers.ts';
import { defaultTimeoutSeconds, HandlerFunction, ImageHandlerFunction, pascalCase } from './functions.ts';
import type { GrantContext } from './grants.ts';

/** `expire-provisional-projects` -> `ExpireProvisionalProjects`. */
export function workerConstructId(row: Pick<WorkerRow, 'name'>): string {
  return pascalCase(row.name);
}

/**
 * Schedule targets get a fixed function name so that their ARN is a plain
 * string: the functions that create schedules (maybe the target itself) can
 * carry it in their environment without a reference cycle.
 */
export function scheduleTargetFunctionName(stack: Stack, row: Pick<WorkerRow, 'name'>): string {
  return `${stack.stackName}-${row.name}`.slice(0, 64);
}

/** The environment variables naming each schedule target's ARN (`targetArnEnvVar`). */
export function scheduleTargetEnvironment(stack: Stack, rows: readonly WorkerRow[] = workers): Record<string, string> {
  const env: Record<string, string> = {};
  for (const row of rows) {
    if (row.trigger.kind !== 'schedule') continue;
    env[row.trigger.targetArnEnvVar] = stack.formatArn({
      service: 'lambda',
      resource: 'function',
      resourceName: scheduleTargetFunctionName(stack, row),
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }
  return env;
}

export interface SlipwayWorkersProps {
  grants: GrantContext;
  environment: Record<string, string>;
  environmentFor: (uses: readonly ResourceUse[]) => Record<string, string>;
  rows?: readonly WorkerRow[];
}

/** One Lambda per row of lib/workers.ts, wired to its queue or made a Scheduler target. */
export class SlipwayWorkers extends Construct {
  readonly workerFunctions = new Map<string, HandlerFunction | ImageHandlerFunction>();

  constructor(scope: Construct, id: string, props: SlipwayWorkersProps) {
    super(scope, id);
    const stack = Stack.of(this);
    for (const row of props.rows ?? workers) {
      const constructId = workerConstructId(row);
      if (this.node.tryFindChild(constructId)) throw new Error(`Two workers map to the construct id ${constructId}; rename one`);
      const trigger = row.trigger;
      const common = {
        handler: row.handler,
        description: `Slipway worker ${row.name}`,
        uses: row.uses,
        timeoutSeconds: row.timeoutSeconds,
        memoryMb: row.memoryMb,
        environment: { ...props.environment, ...props.environmentFor(row.uses) },
        grants: props.grants,
      };
      if (row.image && trigger.kind === 'schedule') throw new Error(`Worker ${row.name}: a container-image worker is a queue consumer`);
      const fn = row.image
        ? new ImageHandlerFunction(this, constructId, { ...common, image: row.image })
        : new HandlerFunction(this, constructId, {
            ...common,
            runtimePackages: row.runtimePackages,
            functionName: trigger.kind === 'schedule' ? scheduleTargetFunctionName(stack, row) : undefined,
          });
      this.workerFunctions.set(row.name, fn);

      if (trigger.kind === 'queue') {
        const visibility = queueDefinitions[trigger.queue].visibilityTimeoutSeconds;
        const timeout = row.timeoutSeconds ?? defaultTimeoutSeconds;
        // Lambda refuses the mapping otherwise: a message must stay hidden while a consumer works on it.
        if (timeout > visibility) {
          throw new Error(
            `Worker ${row.name}: timeout ${timeout}s exceeds the visibility timeout ${visibility}s of queue ${trigger.queue}`,
          );
        }
        fn.fn.addEventSource(
          new SqsEventSource(props.grants.state.queues[trigger.queue], {
            batchSize: trigger.batchSize,
            // A failed message is retried alone (and reaches the DLQ alone), not with its whole batch.
            reportBatchItemFailures: true,
          }),
        );
      } else {
        // The unqualified ARN only (schedules target it), not every version and alias.
        props.grants.state.schedulerRole.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.fn.functionArn] }),
        );
        if (trigger.kind === 'rate') {
          // The recurring schedule itself, in the platform's group (the local platform provisions the same one).
          new scheduler.CfnSchedule(this, `${constructId}Schedule`, {
            name: row.name,
            groupName: props.grants.state.scheduleGroup.scheduleGroupName,
            description: `Slipway worker ${row.name}, every ${trigger.every}`,
            scheduleExpression: rateExpression(trigger),
            flexibleTimeWindow: { mode: 'OFF' },
            target: { arn: fn.fn.functionArn, roleArn: props.grants.state.schedulerRole.roleArn, input: '{}' },
          });
        }
      }
    }
  }
}

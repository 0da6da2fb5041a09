import * as fs from 'node:fs';
import { App, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { HandlerFunction } from '../../infra/functions.ts';
import { FunctionsRuntime } from '../../infra/functions-runtime.ts';
import { SlipwayState } from '../../infra/state.ts';
import { routeKey, routes, type RouteRow } from '../../lib/http/routes.ts';
import { workers } from '../../lib/workers.ts';
import { scratchOutdir } from './stack-synth.ts';

export type Resource = { Type: string; Properties: Record<string, any> };

export const finalizeRow = (routes as readonly RouteRow[]).find((row) => routeKey(row) === 'POST /api/v1/uploads/{upload_id}/finalize')!;

/**
 * The functions runtime in a stack of its own (the state it must not touch, the runtime, a stand-in
 * queued-invocations worker role, the finalize route's Lambda and the function-lambdas worker), synthesized with
 * cdk-nag as the app does, into a folder of its own (`remove()` deletes it).
 */
export function synthesizeFunctionsStack(context: Record<string, unknown> = {}) {
  const outdir = scratchOutdir('slipway-fn-cdk-');
  const app = new App({ outdir, context: { '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true, ...context } });
  // No fixed environment, as `cdk synth` without CDK_DEFAULT_ACCOUNT.
  const stack = new Stack(app, 'FunctionsTest');
  const state = new SlipwayState(stack, 'State');
  const grants = { state, mailFrom: 'noreply@example.site' };
  const runtime = new FunctionsRuntime(stack, 'Functions', {
    grants,
    environment: { FUNCTION_DOMAIN: 'fn.example.site' },
    functionDomain: 'fn.example.site',
    certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/0001',
  });
  const worker = new iam.Role(stack, 'InvocationsWorkerRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  runtime.grantRunInvocationTask(worker);
  const finalize = new HandlerFunction(stack, 'Finalize', {
    handler: finalizeRow.handler,
    description: 'finalize',
    uses: finalizeRow.uses,
    timeoutSeconds: finalizeRow.timeoutSeconds,
    memoryMb: finalizeRow.memoryMb,
    runtimePackages: finalizeRow.runtimePackages,
    environment: {},
    grants,
  });
  const prepareRow = workers.find((row) => row.name === 'function-lambdas')!;
  const prepareWorker = new HandlerFunction(stack, 'FunctionLambdas', {
    handler: prepareRow.handler,
    description: 'function-lambdas',
    uses: prepareRow.uses,
    timeoutSeconds: prepareRow.timeoutSeconds,
    environment: {},
    grants,
  });
  runtime.connectPrepareWorker(prepareWorker.fn);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
  const template = Template.fromStack(stack);
  const resources: Record<string, Resource> = template.toJSON().Resources;
  const idOf = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
  return {
    outdir,
    stack,
    state,
    runtime,
    finalize,
    prepareWorker,
    template,
    resources,
    idOf,
    remove: () => fs.rmSync(outdir, { recursive: true, force: true }),
  };
}

let shared: ReturnType<typeof synthesizeFunctionsStack> | undefined;

/**
 * The default functions stack, synthesized with its bundles once per infra worker (the project shares its workers'
 * module graph): functions-runtime and functions-door read the same one. Read it, never change it; its folder goes
 * when the run ends.
 */
export function sharedFunctionsStack(): ReturnType<typeof synthesizeFunctionsStack> {
  shared ??= synthesizeFunctionsStack();
  return shared;
}

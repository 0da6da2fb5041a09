import { CreateFunctionCommand, GetFunctionCommand, waitUntilFunctionActiveV2 } from '@aws-sdk/client-lambda';
import { lambda } from '../../../aws/lambda.ts';
import { getObject } from '../../../aws/s3-lite.ts';
import { config } from '../../../config.ts';
import { FUNCTION_MEMORY_MB, type FunctionRecord } from '../../model.ts';
import { functionLambdaName, functionLambdaTags, functionPackage } from './lambda-package.ts';
import { cloudHostVariables, variable } from './variables.ts';

/**
 * Makes a built function's Lambda ready: get-or-create, tagged, waited for until Active. Two callers, one path:
 * the function-lambdas worker right after a publish commits (handlers/workers/function-lambdas.ts), so the first
 * request finds it ready, and the cloud host on a request that finds it missing (the fallback: a failed or late
 * prepare, a Lambda the sweep removed after a rollback).
 */

/** How long a user-function Lambda may run: the handler keeps running after the door's 60 s budget until it finishes or this ends. */
export const USER_FUNCTION_TIMEOUT_SECONDS = 300;

/** True when the error is the SDK's error of that name. */
export const isSdkError = (error: unknown, name: string) => (error as { name?: string } | null)?.name === name;

/** The Lambda of a function's bundle, made ready; true when it was not Active yet (this call waited for it). */
export async function prepareFunctionLambda(fn: FunctionRecord): Promise<boolean> {
  const name = functionLambdaName(variable(cloudHostVariables.namePrefix), fn);
  try {
    const current = await lambda().send(new GetFunctionCommand({ FunctionName: name }));
    if (current.Configuration?.State === 'Active') return false;
  } catch (error) {
    if (!isSdkError(error, 'ResourceNotFoundException')) throw error;
    await createFunctionLambda(fn, name);
  }
  // A new VPC function is Pending while Lambda attaches it to the subnets.
  await waitUntilFunctionActiveV2({ client: lambda(), maxWaitTime: 120 }, { FunctionName: name });
  return true;
}

async function createFunctionLambda(fn: FunctionRecord, name: string): Promise<void> {
  // The SDK-less read (s3-lite.ts): the S3 client would add about 120 KB to the worker's bundle for this one call.
  const bundle = Buffer.from(await (await getObject(config.bucket('bundles'), fn.bundle_key)).transformToByteArray());
  try {
    await lambda().send(
      new CreateFunctionCommand({
        FunctionName: name,
        Description: `Slipway function ${fn.name} of project ${fn.project_id} (deployment ${fn.deployment_id})`.slice(0, 256),
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Role: variable(cloudHostVariables.roleArn),
        Code: { ZipFile: functionPackage(bundle) },
        Layers: [variable(cloudHostVariables.runnerLayerArn)],
        MemorySize: FUNCTION_MEMORY_MB,
        Timeout: USER_FUNCTION_TIMEOUT_SECONDS,
        VpcConfig: {
          SubnetIds: variable(cloudHostVariables.subnetIds).split(','),
          SecurityGroupIds: [variable(cloudHostVariables.securityGroupId)],
        },
        // context.env holds nothing the user set; the runner clears what Lambda itself puts there.
        Environment: { Variables: {} },
        Tags: functionLambdaTags(fn),
      }),
    );
  } catch (createError) {
    // Another router instance or the prepare worker created it first: wait for it like for our own.
    if (!isSdkError(createError, 'ResourceConflictException')) throw createError;
  }
}

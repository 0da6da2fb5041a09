import { finished } from 'node:stream';
import {
  CreateFunctionCommand,
  GetFunctionCommand,
  InvokeWithResponseStreamCommand,
  waitUntilFunctionActiveV2,
} from '@aws-sdk/client-lambda';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { lambda } from '../../../aws/lambda.ts';
import { s3 } from '../../../aws/s3.ts';
import { config } from '../../../config.ts';
import { FunctionHostError, type DoorForward, type DoorReply, type FunctionHost } from '../../host.ts';
import { FUNCTION_MEMORY_MB, type DeployedFunction } from '../../model.ts';
import { runnerPayload } from './body-staging.ts';
import { functionLambdaName, functionLambdaTags, functionPackage } from './lambda-package.ts';
import { runQueuedTask } from './queued-task.ts';
import { waitForRequestSlot } from './request-slots.ts';
import { decodeRunnerStream, doorReplyFromPrelude, payloadOf } from './runner-stream.ts';
import { cloudHostVariables, variable } from './variables.ts';

/**
 * The cloud adapter of FunctionHost (docs/functions.md): one Lambda function
 * per built bundle, made from the runner layer and the bundle the first time
 * a request needs it, and reached with InvokeWithResponseStream.
 *
 * Each such Lambda's package is the bundle (`function.mjs`) and the entry
 * (lambda-entry.ts, lambda-package.ts), which drives the runner's exported core (lib/functions/runner/runner.mjs,
 * in the runner layer at /opt): it receives a `CloudRunnerEvent` and streams
 * the prelude JSON, eight NUL bytes, then the body — the layout of the Lambda
 * runtime's `HttpResponseStream` — with its report in `x-slipway-runner-*`
 * headers of the prelude.
 */

/** How long a user-function Lambda may run: the handler keeps running after the door's 60 s budget until it finishes or this ends. */
export const USER_FUNCTION_TIMEOUT_SECONDS = 300;

/** True when the error is the SDK's error of that name. */
const isError = (error: unknown, name: string) => (error as { name?: string } | null)?.name === name;

export function createCloudFunctionHost(): FunctionHost {
  /** Lambda names known to exist and be active in this container. */
  const ready = new Map<string, Promise<boolean>>();

  /** Creates the bundle's Lambda when it does not exist yet; true when this request had to wait for it. */
  async function ensureFunction(fn: DeployedFunction, name: string): Promise<boolean> {
    try {
      const current = await lambda().send(new GetFunctionCommand({ FunctionName: name }));
      if (current.Configuration?.State === 'Active') return false;
    } catch (error) {
      if (!isError(error, 'ResourceNotFoundException')) throw error;
      const object = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: fn.bundle_key }));
      const bundle = Buffer.from(await object.Body!.transformToByteArray());
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
        // Another router instance created it first: wait for it like for our own.
        if (!isError(createError, 'ResourceConflictException')) throw createError;
      }
    }
    // A new VPC function is Pending while Lambda attaches it to the subnets.
    await waitUntilFunctionActiveV2({ client: lambda(), maxWaitTime: 120 }, { FunctionName: name });
    return true;
  }

  return {
    async forwardHttp(fn: DeployedFunction, request: DoorForward, signal: AbortSignal): Promise<DoorReply> {
      const name = functionLambdaName(variable(cloudHostVariables.namePrefix), fn);
      let pending = ready.get(name);
      if (!pending) {
        pending = ensureFunction(fn, name);
        ready.set(name, pending);
        pending.catch(() => ready.delete(name));
      }
      let waited: boolean;
      try {
        // Only the request that created the function waited for it; later ones find it ready.
        waited = await pending;
        ready.set(name, Promise.resolve(false));
      } catch (error) {
        throw new FunctionHostError('start_failed', `the function's Lambda could not be made ready: ${String(error)}`);
      }

      const chunks: Buffer[] = [];
      if (request.body) for await (const chunk of request.body) chunks.push(Buffer.from(chunk as Buffer));
      const event = { method: request.method, publicUrl: fn.url, query: request.query, headers: request.headers };
      const invocation = await runnerPayload(fn, event, chunks.length > 0 ? Buffer.concat(chunks) : null);
      let response;
      try {
        response = await lambda().send(new InvokeWithResponseStreamCommand({ FunctionName: name, Payload: invocation.payload }), {
          abortSignal: signal,
        });
      } catch (error) {
        invocation.discard();
        if (signal.aborted) throw error;
        if (isError(error, 'ResourceNotFoundException')) ready.delete(name);
        // Throttled (the account's concurrency), or the function gone: nothing ran.
        throw new FunctionHostError('start_failed', `invoke failed: ${String(error)}`);
      }
      if (!response.EventStream) throw new FunctionHostError('instance_crashed', 'the invoke reply has no stream');
      const decoded = decodeRunnerStream(payloadOf(response.EventStream));
      // A staged body is of no use once the reply has ended (the handler may read it while it replies).
      decoded.then(({ body }) => finished(body, () => invocation.discard())).catch(() => invocation.discard());
      const { prelude, body } = await decoded;
      return doorReplyFromPrelude(prelude, body, name, waited);
    },

    holdRequestSlot: waitForRequestSlot,

    runQueued: (fn, request, budgetMs, signal) => runQueuedTask(fn, request, budgetMs, signal),
  };
}

import { finished } from 'node:stream';
import { InvokeWithResponseStreamCommand } from '@aws-sdk/client-lambda';
import { lambda } from '../../../aws/lambda.ts';
import { FunctionHostError, type DoorForward, type DoorReply, type FunctionHost } from '../../host.ts';
import type { DeployedFunction } from '../../model.ts';
import { runnerPayload } from './body-staging.ts';
import { functionLambdaName } from './lambda-package.ts';
import { isSdkError, prepareFunctionLambda } from './lambda-prepare.ts';
import { runQueuedTask } from './queued-task.ts';
import { waitForRequestSlot } from './request-slots.ts';
import { decodeRunnerStream, doorReplyFromPrelude, payloadOf } from './runner-stream.ts';
import { cloudHostVariables, variable } from './variables.ts';

/**
 * The cloud adapter of FunctionHost (docs/functions.md): one Lambda function
 * per built bundle, made from the runner layer and the bundle when a publish
 * commits (lambda-prepare.ts), or else the first time a request needs it, and
 * reached with InvokeWithResponseStream.
 *
 * Each such Lambda's package is the bundle (`function.mjs`) and the entry
 * (lambda-entry.ts, lambda-package.ts), which drives the runner's exported core (lib/functions/runner/runner.mjs,
 * in the runner layer at /opt): it receives a `CloudRunnerEvent` and streams
 * the prelude JSON, eight NUL bytes, then the body — the layout of the Lambda
 * runtime's `HttpResponseStream` — with its report in `x-slipway-runner-*`
 * headers of the prelude.
 */

export function createCloudFunctionHost(): FunctionHost {
  /** Lambda names known to exist and be active in this container. */
  const ready = new Map<string, Promise<boolean>>();

  return {
    async forwardHttp(fn: DeployedFunction, request: DoorForward, signal: AbortSignal): Promise<DoorReply> {
      const name = functionLambdaName(variable(cloudHostVariables.namePrefix), fn);
      let pending = ready.get(name);
      if (!pending) {
        pending = prepareFunctionLambda(fn);
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
      const watched = request.tail === true;
      const event = {
        method: request.method,
        publicUrl: fn.url,
        query: request.query,
        headers: request.headers,
        ...(watched ? { tail: true } : {}),
      };
      const invocation = await runnerPayload(fn, event, chunks.length > 0 ? Buffer.concat(chunks) : null);
      let response;
      try {
        response = await lambda().send(new InvokeWithResponseStreamCommand({ FunctionName: name, Payload: invocation.payload }), {
          abortSignal: signal,
        });
      } catch (error) {
        invocation.discard();
        if (signal.aborted) throw error;
        if (isSdkError(error, 'ResourceNotFoundException')) ready.delete(name);
        // Throttled (the account's concurrency), or the function gone: nothing ran.
        throw new FunctionHostError('start_failed', `invoke failed: ${String(error)}`);
      }
      if (!response.EventStream) throw new FunctionHostError('instance_crashed', 'the invoke reply has no stream');
      const decoded = decodeRunnerStream(payloadOf(response.EventStream), { framed: watched });
      // A staged body is of no use once the reply has ended (the handler may read it while it replies).
      decoded.then(({ body }) => finished(body, () => invocation.discard())).catch(() => invocation.discard());
      const { prelude, body, console: consoleLines } = await decoded;
      const reply = doorReplyFromPrelude(prelude, body, name, waited);
      // Filled before the body ends: the door reads it once the call is over.
      if (watched) reply.console = consoleLines;
      return reply;
    },

    holdRequestSlot: waitForRequestSlot,
    prepareHttp: prepareFunctionLambda,

    runQueued: (fn, request, budgetMs, signal) => runQueuedTask(fn, request, budgetMs, signal),
  };
}

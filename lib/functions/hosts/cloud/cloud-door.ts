import { createFunctionDoor, type FunctionDoor } from '../../door.ts';
import { isTeamEnrolledInFunctions, resolveFunctionByHostname } from '../../resolve.ts';
import { FunctionTelemetry } from '../../telemetry.ts';
import { FunctionTailPublisher } from '../../tail.ts';
import { createCloudFunctionHost } from './cloud-host.ts';

/**
 * The HTTPS door as the cloud runs it, in both of its fronts: the router Lambda (handlers/edge/functions-router.ts)
 * and the container door for large or undeclared bodies (handlers/edge/functions-door-server.ts). One set-up, so the
 * two answer a request alike.
 */
export function createCloudDoor(): { door: FunctionDoor; telemetry: FunctionTelemetry; tail: FunctionTailPublisher } {
  const telemetry = new FunctionTelemetry();
  // Live tails: the door forwards a watched function's events to its watchers' queues (lib/functions/tail.ts).
  const tail = new FunctionTailPublisher();
  const cloudHost = createCloudFunctionHost();
  const door = createFunctionDoor({
    host: {
      ...cloudHost,
      // Lambda tells the door of no environment's start (the local host's events): a reply from a new environment,
      // whose entry reports its boot time, is one, so the function's instance starts and boot times are counted.
      async forwardHttp(fn, request, signal) {
        const reply = await cloudHost.forwardHttp(fn, request, signal);
        if (reply.bootMs !== undefined) telemetry.instanceStarted(fn, reply.bootMs);
        return reply;
      },
    },
    resolve: resolveFunctionByHostname,
    isEnrolled: isTeamEnrolledInFunctions,
    telemetry,
    tail,
  });
  return { door, telemetry, tail };
}

import type { ServerResponse } from 'node:http';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { createFunctionDoor, type FunctionDoor } from '../functions/door.ts';
import { doorRequestOfIncoming, openNodeReply } from '../functions/door-http.ts';
import type { DeployedFunction } from '../functions/model.ts';
import { isTeamEnrolledInFunctions, resolveFunctionByHostname } from '../functions/resolve.ts';
import { FunctionTelemetry } from '../functions/telemetry.ts';
import { FunctionTailPublisher } from '../functions/tail.ts';
import type { HostnameHandler } from './api-server.ts';
import { createLocalFunctionHost } from '../functions/hosts/local/local-host.ts';
import type { LocalDriver } from './driver.ts';

/** Whether a Host header names `{label}.{function_domain}` (port ignored). */
export function isFunctionHostname(host: string | undefined, functionDomain = config.functionDomain()): boolean {
  if (!host) return false;
  const name = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  return name.endsWith(`.${functionDomain.toLowerCase()}`);
}

async function loadBundle(fn: DeployedFunction): Promise<Buffer> {
  const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: fn.bundle_key }));
  return Buffer.from(await reply.Body!.transformToByteArray());
}

/**
 * The local platform's HTTPS door: requests for `*.{function_domain}`
 * (`{name}-{subdomain}.fn.localhost:PORT`) go through the door to sandboxed
 * runner instances on this machine. A driver too: started with the platform
 * (the sandbox probe, the pre-started instances) and stopped with it.
 */
/**
 * Where the functions come from: the platform's live deployments (the default), or the folder
 * `slipway dev` serves (its own builds, no table, no telemetry).
 */
export interface FunctionSource {
  resolve: (hostname: string) => Promise<DeployedFunction | null>;
  isEnrolled: (teamId: string) => Promise<boolean>;
  loadBundle: (fn: DeployedFunction) => Promise<Buffer>;
  telemetry: boolean;
  /** Live tails of the functions (the platform's; `slipway dev` prints every line instead). */
  tail?: boolean;
  /** Printed to the function's console lines' listener (`slipway dev` shows them). */
  onConsole?: (fn: DeployedFunction, stream: 'stdout' | 'stderr', line: string) => void;
}

const deployedFunctions: FunctionSource = {
  resolve: resolveFunctionByHostname,
  isEnrolled: isTeamEnrolledInFunctions,
  loadBundle,
  telemetry: true,
  tail: true,
};

export function localFunctionsRuntime(source: FunctionSource = deployedFunctions): {
  hostnameHandler: HostnameHandler;
  driver: LocalDriver & { sandboxReport(): string[] };
} {
  let host: ReturnType<typeof createLocalFunctionHost> | null = null;
  let door: FunctionDoor | null = null;
  const telemetry = new FunctionTelemetry();
  const tail = source.tail ? new FunctionTailPublisher() : undefined;

  const ensure = () => {
    if (!door) {
      host = createLocalFunctionHost({
        loadBundle: source.loadBundle,
        onEvent: (event) => {
          if (event.type === 'console') {
            source.onConsole?.(event.fn, event.stream, event.line);
            // An instance serves many calls at once: its lines go to the function's tail as they come.
            tail?.publish(event.fn, { type: 'console', at: new Date().toISOString(), stream: event.stream, line: event.line });
          }
          if (!source.telemetry) return;
          if (event.type === 'cold_start') telemetry.instanceStarted(event.fn, event.bootMs);
          else if (event.type === 'instance_stopped') telemetry.instanceStopped(event.fn, event.instanceSeconds, event.peakMemoryBytes);
          // Deaths under a request are counted by the door, once per request that failed (as in the cloud,
          // where the host reports no events); the host adds what only it sees.
          else if (event.type === 'limit' && (event.kind === 'egress_refused' || event.kind === 'instance_cap_wait'))
            telemetry.limitHit(event.fn, event.kind);
        },
      });
      door = createFunctionDoor({
        host,
        resolve: source.resolve,
        isEnrolled: source.isEnrolled,
        telemetry: source.telemetry ? telemetry : undefined,
        tail,
      });
    }
    return door;
  };

  // The function domain is read on every request: it is configuration, and a platform sets it as it starts.
  const hostnameHandler: HostnameHandler = (req, res: ServerResponse) => {
    if (!isFunctionHostname(req.headers.host)) return false;
    return ensure()
      .answer(doorRequestOfIncoming(req, res, req.headers.host!), openNodeReply(res))
      .then(() => true);
  };

  return {
    hostnameHandler,
    driver: {
      name: 'functions',
      // The sandbox starts on the first function request (or the start log's report): the many
      // platforms a test run starts for other parts do not each boot runner instances.
      start: () => {
        if (source.telemetry) telemetry.start();
      },
      stop: async () => {
        if (source.telemetry) await telemetry.stop();
        await tail?.flush();
        await host?.stop();
      },
      sandboxReport: () => {
        ensure();
        return host!.fallbacks;
      },
    },
  };
}

import type { HostnameHandler } from './api-server.ts';
import { localFunctionsRuntime } from './functions-runtime.ts';
import type { LocalDriver } from './driver.ts';
import { queuedRuntime } from './queued-runtime.ts';
import { captureDriver } from './capture-driver.ts';
import { buildsRuntime } from './builds/builds-runtime.ts';
import { schedulerDriver } from './scheduler-driver.ts';
import { siteHostnameHandler } from './site-host.ts';

/**
 * What the local platform runs beside the API: hostname handlers (sites,
 * the functions HTTPS door) and drivers (scheduler firing, the functions
 * runtime). Each part of the platform registers its own here.
 */
export function localParts(options: { synthesized?: boolean } = {}): {
  hostnameHandlers: HostnameHandler[];
  drivers: (() => LocalDriver)[];
  functions: ReturnType<typeof localFunctionsRuntime>['driver'];
} {
  const functions = localFunctionsRuntime();
  if (options.synthesized) {
    // The template's event source mappings, Scheduler targets and distributions (the functions door's
    // included) replace the source parts (local-cloud/runtime.ts). What stays: the screenshot capture,
    // whose Lambda is a container image the synthesized mode cannot run.
    return { hostnameHandlers: [], drivers: [() => captureDriver()], functions: functions.driver };
  }
  const builds = buildsRuntime();
  return {
    // The door first: its check is one suffix test, and the site handler would only pass its hosts on.
    hostnameHandlers: [functions.hostnameHandler, siteHostnameHandler],
    drivers: [
      // EventBridge Scheduler: fires due one-time schedules (provisional project expiry).
      () => schedulerDriver(),
      // Sandboxed runner instances of the functions HTTPS door; stopped with the platform.
      () => functions.driver,
      // The build host the builds queue's consumer runs builds on (sandboxed, like functions).
      () => builds,
      // SQS event source mappings (queued function invocations, builds on that host), after reclaiming what a dead platform left open.
      () => queuedRuntime({ handlers: { builds: async () => builds.worker } }),
      // Screenshots of published sites, taken with headless Chromium when there is one.
      () => captureDriver(),
    ],
    functions: functions.driver,
  };
}

import type { HostHandler } from './api-server.ts';
import type { LocalDriver } from './platform.ts';
import { schedulerDriver } from './scheduler-driver.ts';
import { siteHostHandler } from './site-host.ts';

/**
 * What the local platform runs beside the API: hostname handlers (sites,
 * function HTTPS door) and drivers (SQS poller, scheduler firing). Each part
 * of the platform registers its own here.
 */
export function localHostHandlers(): HostHandler[] {
  return [siteHostHandler];
}

export function localDrivers(): (() => LocalDriver)[] {
  return [
    // EventBridge Scheduler: fires due one-time schedules (provisional project expiry).
    () => schedulerDriver(),
  ];
}

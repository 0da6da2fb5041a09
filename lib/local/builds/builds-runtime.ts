import { useBuildHost } from '../../builds/host.ts';
import type { LocalDriver } from '../driver.ts';
import { createLocalBuildHost, type LocalBuildHost } from './local-build-host.ts';

/**
 * The local platform's build host: registered at start (the builds queue's
 * consumer, played by the queue driver, finds it there), made on the first
 * build, and closed with the platform (running builds are stopped; their
 * next follow finds them lost and records a platform failure).
 */
export function buildsRuntime(): LocalDriver & { fallbacks(): string[] } {
  let host: LocalBuildHost | null = null;
  const ensure = () => (host ??= createLocalBuildHost());
  return {
    name: 'builds',
    start() {
      useBuildHost({
        start: (job) => ensure().start(job),
        report: (handle, from) => ensure().report(handle, from),
        stop: (handle) => ensure().stop(handle),
        release: (handle) => ensure().release(handle),
      });
    },
    fallbacks: () => ensure().fallbacks,
    async stop() {
      useBuildHost(null);
      await host?.close();
    },
  };
}

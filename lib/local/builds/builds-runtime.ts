import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { buildsWorker } from '../../builds/builds-worker.ts';
import type { LocalDriver } from '../driver.ts';
import { createLocalBuildHost, type LocalBuildHost } from './local-build-host.ts';

/**
 * The local platform's build host and the builds queue's consumer on it (`worker`, which the queues
 * driver plays: lib/local/wiring.ts hands it over). The host is made on the first build and closed with
 * the platform (running builds are stopped; their next follow finds them lost and records a platform
 * failure).
 */
export function buildsRuntime(): LocalDriver & {
  fallbacks(): string[];
  worker: (event: SQSEvent) => Promise<SQSBatchResponse>;
} {
  let host: LocalBuildHost | null = null;
  const ensure = () => (host ??= createLocalBuildHost());
  return {
    name: 'builds',
    worker: buildsWorker(ensure),
    start() {},
    fallbacks: () => ensure().fallbacks,
    async stop() {
      await host?.close();
    },
  };
}

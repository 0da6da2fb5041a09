import type { WorkerRow } from '../workers.ts';
import { chromiumPath } from './capture-worker.ts';
import type { LocalDriver } from './platform.ts';
import { queueDriver, type QueueDriver } from './queue-driver.ts';

/**
 * The screenshots queue's consumer on the local platform (no lib/workers.ts
 * row: the cloud capture worker, a browser in a container, is not built).
 * Off without a Chromium binary, or with SCREENSHOT_CAPTURE=off (the test
 * platform's default: a browser per publish would slow every test).
 */
export const captureRow: WorkerRow = {
  name: 'screenshots-capture',
  handler: 'lib/local/capture-worker.ts',
  trigger: { kind: 'queue', queue: 'screenshots', batchSize: 1 },
  uses: [],
};

export function captureEnabled(): boolean {
  return process.env.SCREENSHOT_CAPTURE !== 'off' && chromiumPath() !== null;
}

export function captureDriver(options: { pollMs?: number } = {}): QueueDriver | LocalDriver {
  if (!captureEnabled()) return { name: 'screenshots-capture (off)', start() {}, async stop() {} };
  // One browser at a time: a capture takes a core for about a second.
  return queueDriver({ rows: [captureRow], concurrency: 1, pollMs: options.pollMs ?? 200 });
}

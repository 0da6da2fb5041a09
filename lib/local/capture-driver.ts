import { chromiumPath } from '../screenshots/capture.ts';
import { workers, type WorkerRow } from '../workers.ts';
import type { LocalDriver } from './driver.ts';
import { queueDriver, type QueueDriver } from './queue-driver.ts';
import { localConfig } from '../local-config.ts';

/**
 * The screenshots queue's consumer on the local platform: the cloud capture
 * worker's row of lib/workers.ts (its handler file, the same code its image
 * runs), played by a queue driver of its own with Debian's Chromium. Off
 * without a Chromium binary, or with SCREENSHOT_CAPTURE=off (the test
 * platform's default: a browser per publish would slow every test).
 */
export const captureRow: WorkerRow = workers.find((row) => row.name === 'screenshots-capture')!;

export function captureEnabled(): boolean {
  return !localConfig.screenshotCaptureOff() && chromiumPath() !== null;
}

export function captureDriver(options: { pollMs?: number } = {}): QueueDriver | LocalDriver {
  if (!captureEnabled()) return { name: 'screenshots-capture (off)', start() {}, async stop() {} };
  // One browser at a time: a capture takes a core for about a second.
  return queueDriver({ rows: [captureRow], concurrency: 1, pollMs: options.pollMs ?? 200 });
}

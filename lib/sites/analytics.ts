import { config, perPlatform } from '../config.ts';
import { logger } from '../logger.ts';
import { PeriodicFlush } from '../periodic-flush.ts';
import { type AnalyticsDay, addDayCounts, type DayCounts, readAnalyticsRows, type StatusClass } from './analytics-records.ts';

/**
 * Site analytics (the Project's `analytics_enabled`): serving counts each reply
 * in memory, and a timer writes the counts out every few seconds, so the reply
 * never waits on a write. One row per project and UTC day holds the requests,
 * bytes and status classes; one row per project, day and path holds that path's
 * requests (the top paths are summed when read).
 *
 * Each flush of a project's day is one transaction that also checks the
 * project still has analytics on: switching it off (then deleting the rows)
 * can never be undone by a flush of counts taken just before (the rows: lib/sites/analytics-records.ts).
 */

const STATUS_CLASSES: readonly StatusClass[] = ['2xx', '3xx', '4xx', '5xx'];

/** Paths counted per project, day and flush; the requests of the others count as `other_paths`. */
const MAX_PATHS_PER_FLUSH = 50;
/** A path is counted by its first 512 bytes (a sort key holds at most 1,024). */
const MAX_PATH_BYTES = 512;

function countedPath(path: string): string {
  if (!path) return '/';
  if (Buffer.byteLength(path) <= MAX_PATH_BYTES) return path;
  // Cut on a character boundary: decoding a cut UTF-8 sequence would add a replacement character.
  return Buffer.from(path)
    .subarray(0, MAX_PATH_BYTES)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}

export const dayOf = (date: Date) => date.toISOString().slice(0, 10);

export interface ServedRequest {
  projectId: string;
  teamId: string;
  /** The request's path, without the query string. */
  path: string;
  status: number;
  /** Body bytes sent (0 for HEAD and 304). */
  bytes: number;
}

function flushIntervalMs(): number {
  return config.siteAnalyticsFlushMs();
}

function statusClass(status: number): StatusClass | null {
  const index = Math.floor(status / 100) - 2;
  return STATUS_CLASSES[index] ?? null;
}

export class SiteAnalytics {
  /** Per platform (lib/config.ts): counts are written to the table of the platform that served them. */
  private readonly held = perPlatform(() => ({
    days: new Map<string, DayCounts>(),
    flusher: new PeriodicFlush(() => this.writeOut(), flushIntervalMs),
  }));

  /** Counts one reply; costs a few map updates, never I/O. */
  record(request: ServedRequest, now = new Date()): void {
    const day = dayOf(now);
    const key = `${request.projectId}|${day}`;
    let bucket = this.held().days.get(key);
    if (!bucket) {
      bucket = {
        projectId: request.projectId,
        teamId: request.teamId,
        day,
        requests: 0,
        bytes: 0,
        statuses: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 },
        paths: new Map(),
        otherPaths: 0,
      };
      this.held().days.set(key, bucket);
    }
    bucket.requests += 1;
    bucket.bytes += request.bytes;
    const cls = statusClass(request.status);
    if (cls) bucket.statuses[cls] += 1;
    const path = countedPath(request.path);
    const count = bucket.paths.get(path);
    if (count !== undefined) bucket.paths.set(path, count + 1);
    else if (bucket.paths.size < MAX_PATHS_PER_FLUSH) bucket.paths.set(path, 1);
    else bucket.otherPaths += 1;
    this.held().flusher.start();
  }

  /** Writes what was counted since the last flush. A failed write is logged and its counts dropped (analytics, not billing). */
  flush(): Promise<void> {
    return this.held().flusher.flush();
  }

  /** Writes what is left and stops the timer (the next count starts it again). */
  stop(): Promise<void> {
    return this.held().flusher.stop();
  }

  private async writeOut(): Promise<void> {
    const buckets = [...this.held().days.values()];
    this.held().days.clear();
    const results = await Promise.allSettled(buckets.map((bucket) => addDayCounts(bucket)));
    for (const result of results) {
      if (result.status === 'rejected') logger.warn('site analytics write failed', { error: String(result.reason) });
    }
  }
}

/** The recorder of this process (its counts kept per platform): the serving module counts into it. */
export const siteAnalytics = new SiteAnalytics();

export interface ProjectAnalytics {
  from: string;
  to: string;
  totals: { requests: number; bytes: number; status_classes: Record<StatusClass, number> };
  /** Every day of the range, oldest first; a day with no requests has zeros. */
  days: AnalyticsDay[];
  /** The most requested paths of the range, most first (at most 10). */
  top_paths: { path: string; requests: number }[];
}

export const TOP_PATHS = 10;

/** The project's analytics for the UTC days `from` to `to`, both included (`YYYY-MM-DD`). */
export async function readProjectAnalytics(projectId: string, from: string, to: string): Promise<ProjectAnalytics> {
  const { days: byDay, paths } = await readAnalyticsRows(projectId, from, to);
  const days: AnalyticsDay[] = [];
  const totals = { requests: 0, bytes: 0, status_classes: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } as Record<StatusClass, number> };
  for (let t = Date.parse(from); t <= Date.parse(to); t += 86_400_000) {
    const date = dayOf(new Date(t));
    const day = byDay.get(date) ?? { date, requests: 0, bytes: 0, status_classes: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } };
    days.push(day);
    totals.requests += day.requests;
    totals.bytes += day.bytes;
    for (const cls of STATUS_CLASSES) totals.status_classes[cls] += day.status_classes[cls];
  }
  const top_paths = [...paths]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, TOP_PATHS)
    .map(([path, requests]) => ({ path, requests }));
  return { from, to, totals, days, top_paths };
}

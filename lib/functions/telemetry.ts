import { config, perPlatform } from '../config.ts';
import { logger } from '../logger.ts';
import { PeriodicFlush } from '../periodic-flush.ts';
import { addToHourRow, addToWeekRow, raisePeakMemory, type HourBucket, type WeekBucket } from './telemetry-records.ts';

/**
 * Functions telemetry, written as the doors work and read by the admin
 * telemetry endpoint: per function and clock hour (requests, wakes, instance
 * starts with their boot times, instance seconds, peak memory, limit hits by
 * kind) and per team and week (HTTP requests). Counted in memory and written
 * every few seconds, so no reply waits for a table write.
 */

/** Limit hits by kind. `body_413` and `http_timeout` are the spec's; the others are ours. */
export type LimitKind =
  /** An HTTPS door request body over 10 MiB. */
  | 'body_413'
  /** The budget ended before the reply was sent (504) or while it streamed (cut). */
  | 'http_timeout'
  /** An instance killed by its 512 MB memory cap. */
  | 'out_of_memory'
  /** An instance that died for another reason mid-request. */
  | 'instance_crashed'
  /** A request that had to wait because every instance slot (3 x 10) was busy. */
  | 'instance_cap_wait'
  /** An outbound connection the egress rule refused (port 80, private, link-local, metadata). */
  | 'egress_refused'
  /** Queued door: an invoke or poll over 20 per minute from one IP address (429). */
  | 'queued_rate_limit'
  /** Queued door: an invoke refused because the team had 10 invocations in flight (429). */
  | 'queued_inflight_cap'
  /** Queued door: an invocation stopped at the end of its budget (timed_out). */
  | 'queued_timeout';

export const LIMIT_KINDS: readonly LimitKind[] = [
  'body_413',
  'http_timeout',
  'out_of_memory',
  'instance_crashed',
  'instance_cap_wait',
  'egress_refused',
  'queued_rate_limit',
  'queued_inflight_cap',
  'queued_timeout',
];

/** Boot-time samples kept per function and flush: enough for a p99 of an hour's cold starts. */
const MAX_BOOT_SAMPLES = 200;

/** `2026-11-23T14` */
export const hourOf = (date: Date) => date.toISOString().slice(0, 13);

/** The Monday (UTC) that starts the week of `date`, as `YYYY-MM-DD`. */
export function weekStartOf(date: Date): string {
  const day = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return day.toISOString().slice(0, 10);
}

function flushIntervalMs(): number {
  return config.functionsTelemetryFlushMs();
}

export class FunctionTelemetry {
  /** Per platform (lib/config.ts): counts are written to the table of the platform that took them. */
  private readonly held = perPlatform(() => ({
    hours: new Map<string, HourBucket>(),
    weeks: new Map<string, WeekBucket>(),
    flusher: new PeriodicFlush(() => this.writeOut(), flushIntervalMs),
  }));

  private hourBucket(fn: HourBucket['fn'], hour = this.clock().hour): HourBucket {
    const key = `${fn.team_id}|${hour}|${fn.function_id}`;
    let bucket = this.held().hours.get(key);
    if (!bucket) {
      bucket = {
        fn,
        hour,
        httpRequests: 0,
        wakes: 0,
        podStarts: 0,
        bootMs: [],
        instanceSeconds: 0,
        backgroundInvocations: 0,
        backgroundRuntimeSeconds: 0,
        peakMemoryMib: 0,
        limits: new Map(),
      };
      this.held().hours.set(key, bucket);
    }
    return bucket;
  }

  /** One HTTPS door request that reached a function; `wake` when it waited for an instance to start. */
  httpRequest(fn: HourBucket['fn'], wake: boolean): void {
    const { hour, week } = this.clock();
    const bucket = this.hourBucket(fn, hour);
    bucket.httpRequests += 1;
    if (wake) bucket.wakes += 1;
    this.weekBucket(fn.team_id, week).httpRequests += 1;
  }

  /** The current hour and week, worked out once a minute: every warm request asks. */
  private clockCache = { until: 0, hour: '', week: '' };
  private clock(): { hour: string; week: string } {
    const nowMs = Date.now();
    if (nowMs >= this.clockCache.until) {
      const now = new Date(nowMs);
      this.clockCache = { until: nowMs - (nowMs % 60_000) + 60_000, hour: hourOf(now), week: weekStartOf(now) };
    }
    return this.clockCache;
  }

  private weekBucket(teamId: string, weekStart: string): WeekBucket {
    const key = `${teamId}|${weekStart}`;
    let week = this.held().weeks.get(key);
    if (!week) {
      week = { teamId, weekStart, httpRequests: 0, backgroundInvocations: 0, backgroundRuntimeSeconds: 0 };
      this.held().weeks.set(key, week);
    }
    return week;
  }

  /** One queued invocation that ran, for `seconds` (the week's background_invocations and background_runtime_seconds). */
  backgroundInvocation(fn: HourBucket['fn'], seconds: number): void {
    const { hour, week: weekStart } = this.clock();
    const week = this.weekBucket(fn.team_id, weekStart);
    week.backgroundInvocations += 1;
    week.backgroundRuntimeSeconds += seconds;
    const bucket = this.hourBucket(fn, hour);
    bucket.backgroundInvocations += 1;
    bucket.backgroundRuntimeSeconds += seconds;
  }

  /** An instance started, taking `bootMs` to be ready. */
  instanceStarted(fn: HourBucket['fn'], bootMs: number): void {
    const bucket = this.hourBucket(fn);
    bucket.podStarts += 1;
    if (bucket.bootMs.length < MAX_BOOT_SAMPLES) bucket.bootMs.push(Math.round(bootMs));
  }

  /** An instance stopped after living `seconds`, its memory having peaked at `peakMemoryBytes`. */
  instanceStopped(fn: HourBucket['fn'], seconds: number, peakMemoryBytes: number): void {
    const bucket = this.hourBucket(fn);
    bucket.instanceSeconds += seconds;
    bucket.peakMemoryMib = Math.max(bucket.peakMemoryMib, Math.ceil(peakMemoryBytes / (1024 * 1024)));
  }

  limitHit(fn: HourBucket['fn'], kind: LimitKind): void {
    const bucket = this.hourBucket(fn);
    const entry = bucket.limits.get(kind) ?? { count: 0, lastAt: '' };
    entry.count += 1;
    entry.lastAt = new Date().toISOString();
    bucket.limits.set(kind, entry);
  }

  /** Writes what was counted since the last flush; a failed write is logged and its counts dropped (telemetry, not billing). */
  flush(): Promise<void> {
    return this.held().flusher.flush();
  }

  private async writeOut(): Promise<void> {
    const hours = [...this.held().hours.values()];
    const weeks = [...this.held().weeks.values()];
    this.held().hours.clear();
    this.held().weeks.clear();
    const writes: Promise<unknown>[] = [];
    for (const b of hours) {
      writes.push(addToHourRow(b));
      // A maximum, not a sum: written only when it raises the stored peak.
      if (b.peakMemoryMib > 0) writes.push(raisePeakMemory(b));
    }
    for (const w of weeks) writes.push(addToWeekRow(w));
    const results = await Promise.allSettled(writes);
    for (const result of results) {
      if (result.status === 'rejected') logger.warn('functions telemetry write failed', { error: String(result.reason) });
    }
  }

  /** Flushes every few seconds until stopped. */
  start(): void {
    this.held().flusher.start();
  }

  stop(): Promise<void> {
    return this.held().flusher.stop();
  }
}

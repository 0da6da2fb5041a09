import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import type { DeployedFunction } from './model.ts';
import type { ExpressionValues, Stored } from '../db/item.ts';

/**
 * The rows functions telemetry adds to (telemetry.ts counts, telemetry-report.ts reads): per function and
 * clock hour, `FNSTATS#{team}` / `HOUR#...`, and per team and week, `WEEK#...`. Every write adds to what
 * the row holds, so flushes from several processes (or Lambda containers) sum.
 */

/** Hourly rows serve the 7-day and 24-hour figures; a little slack for late readers. */
const HOUR_ROW_DAYS = 9;
/** The admin view shows 8 weeks; rows outlive that a little. */
const WEEK_ROW_DAYS = 7 * 10;
export interface HourBucket {
  fn: Pick<DeployedFunction, 'function_id' | 'name' | 'project_id' | 'team_id'>;
  hour: string;
  httpRequests: number;
  wakes: number;
  podStarts: number;
  bootMs: number[];
  instanceSeconds: number;
  /** Queued invocations that ran, and their runtime: the admin view's 7-day background figure reads hours, not weeks. */
  backgroundInvocations: number;
  backgroundRuntimeSeconds: number;
  peakMemoryMib: number;
  /** Limit hits by kind (telemetry.ts's LimitKind). */
  limits: Map<string, { count: number; lastAt: string }>;
}

/**
 * A function's hour row as hourRowUpdate writes it: the counts are ADDed, so a count never added is absent; each
 * limit kind that was hit has its count (`limit_{kind}`) and last time (`limit_{kind}_last_at`).
 */
export type HourRowItem = Stored<
  {
    function_id: string;
    function_name: string;
    project_id: string;
    team_id: string;
    hour: string;
    ttl: number;
    boot_ms?: number[];
    http_requests?: number;
    wakes?: number;
    pod_starts?: number;
    instance_seconds?: number;
    background_invocations?: number;
    background_runtime_seconds?: number;
    peak_memory_mib?: number;
  } & { [limit: `limit_${string}`]: number | string | undefined }
>;

/** A team's week row: its counts ADDed, absent until added. */
export type WeekRowItem = Stored<{
  week_start: string;
  http_requests?: number;
  background_invocations?: number;
  background_runtime_seconds?: number;
}>;

export interface WeekBucket {
  teamId: string;
  weekStart: string;
  httpRequests: number;
  backgroundInvocations: number;
  backgroundRuntimeSeconds: number;
}

/** The hour row's update: its identity and TTL set, its counts added, each limit's count and last time. */
function hourRowUpdate(b: HourBucket) {
  const names: Record<string, string> = {};
  const values: ExpressionValues = {
    ':function_id': b.fn.function_id,
    ':function_name': b.fn.name,
    ':project_id': b.fn.project_id,
    ':team_id': b.fn.team_id,
    ':hour': b.hour,
    ':ttl': epochSeconds(new Date(Date.parse(`${b.hour}:00:00Z`) + HOUR_ROW_DAYS * 86_400_000)),
    ':requests': b.httpRequests,
    ':wakes': b.wakes,
    ':pod_starts': b.podStarts,
    ':instance_seconds': Math.round(b.instanceSeconds * 1000) / 1000,
    ':boot_ms': b.bootMs,
    ':background': b.backgroundInvocations,
    ':background_seconds': Math.round(b.backgroundRuntimeSeconds * 1000) / 1000,
    ':empty': [],
  };
  const set = [
    'function_id = :function_id',
    'function_name = :function_name',
    'project_id = :project_id',
    'team_id = :team_id',
    '#hour = :hour',
    '#ttl = :ttl',
    'boot_ms = list_append(if_not_exists(boot_ms, :empty), :boot_ms)',
  ];
  const add = [
    'http_requests :requests',
    'wakes :wakes',
    'pod_starts :pod_starts',
    'instance_seconds :instance_seconds',
    'background_invocations :background',
    'background_runtime_seconds :background_seconds',
  ];
  names['#hour'] = 'hour';
  names['#ttl'] = 'ttl';
  for (const [kind, { count, lastAt }] of b.limits) {
    add.push(`limit_${kind} :limit_${kind}`);
    set.push(`limit_${kind}_last_at = :limit_${kind}_last_at`);
    values[`:limit_${kind}`] = count;
    values[`:limit_${kind}_last_at`] = lastAt;
  }
  return { set, add, names, values };
}

/** Adds a flush's counts for one function and hour to its row. */
export function addToHourRow(b: HourBucket): Promise<unknown> {
  const { set, add, names, values } = hourRowUpdate(b);
  return dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.functionStatsHour(b.fn.team_id, b.hour, b.fn.function_id),
      UpdateExpression: `SET ${set.join(', ')} ADD ${add.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
}

/** Raises the hour row's peak memory to the flush's, when the row holds less. */
export async function raisePeakMemory(b: HourBucket): Promise<void> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.functionStatsHour(b.fn.team_id, b.hour, b.fn.function_id),
        UpdateExpression: 'SET peak_memory_mib = :peak',
        ConditionExpression: 'attribute_not_exists(peak_memory_mib) OR peak_memory_mib < :peak',
        ExpressionAttributeValues: { ':peak': b.peakMemoryMib },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
  }
}

/** Adds a flush's counts for one team and week to its row. */
export function addToWeekRow(w: WeekBucket): Promise<unknown> {
  return dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.functionStatsWeek(w.teamId, w.weekStart),
      UpdateExpression:
        'SET team_id = :team_id, week_start = :week_start, #ttl = :ttl ADD http_requests :requests, background_invocations :background, background_runtime_seconds :runtime',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':team_id': w.teamId,
        ':week_start': w.weekStart,
        ':ttl': epochSeconds(new Date(Date.parse(w.weekStart) + WEEK_ROW_DAYS * 86_400_000)),
        ':requests': w.httpRequests,
        ':background': w.backgroundInvocations,
        ':runtime': Math.round(w.backgroundRuntimeSeconds * 1000) / 1000,
      },
    }),
  );
}

import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { type NamedWrite, refusedAt, transact } from '../db/transact.ts';
import type { Stored, TableKey } from '../db/item.ts';

/**
 * The rows of site analytics (lib/sites/analytics.ts): one per project and UTC day holding the requests,
 * bytes and status classes, one per project, day and path holding that path's requests. Counts are added,
 * never set, each flush in a transaction that checks the project still has analytics on.
 */

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

/** What one flush adds to a project's day. */
export interface DayCounts {
  projectId: string;
  teamId: string;
  day: string;
  requests: number;
  bytes: number;
  statuses: Record<StatusClass, number>;
  paths: Map<string, number>;
  otherPaths: number;
}

export interface AnalyticsDay {
  date: string;
  requests: number;
  bytes: number;
  status_classes: Record<StatusClass, number>;
}

/** Rows are kept 400 days (table TTL), then gone. */
const ROW_DAYS = 400;
/** A DynamoDB transaction holds at most 100 items: the project check, the day row and 98 path rows. */
const PATH_ROWS_PER_TRANSACTION = 98;

/** The project still has analytics on (`analytics_on`): switching it off can never be undone by a flush. */
function analyticsOn(projectId: string): NamedWrite {
  return {
    name: 'analytics_on',
    write: {
      ConditionCheck: {
        Key: keys.project(projectId),
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(analytics_enabled) OR analytics_enabled <> :off)',
        ExpressionAttributeValues: { ':off': false },
      },
    },
  };
}

function dayRow(counts: DayCounts, ttl: number): NamedWrite {
  return {
    name: 'day',
    write: {
      Update: {
        Key: keys.analyticsDay(counts.projectId, counts.day),
        UpdateExpression:
          'SET #type = :type, project_id = :project, team_id = :team, #day = :day, #ttl = :ttl ADD requests :requests, bytes :bytes, status_2xx :s2, status_3xx :s3, status_4xx :s4, status_5xx :s5, other_paths :other',
        ExpressionAttributeNames: { '#type': 'type', '#day': 'day', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':type': 'analytics_day',
          ':project': counts.projectId,
          ':team': counts.teamId,
          ':day': counts.day,
          ':ttl': ttl,
          ':requests': counts.requests,
          ':bytes': counts.bytes,
          ':s2': counts.statuses['2xx'],
          ':s3': counts.statuses['3xx'],
          ':s4': counts.statuses['4xx'],
          ':s5': counts.statuses['5xx'],
          ':other': counts.otherPaths,
        },
      },
    },
  };
}

function pathRow(counts: DayCounts, path: string, requests: number, ttl: number): NamedWrite {
  return {
    name: `path:${path}`,
    write: {
      Update: {
        Key: keys.analyticsPath(counts.projectId, counts.day, path),
        UpdateExpression: 'SET #type = :type, #path = :path, #day = :day, #ttl = :ttl ADD requests :requests',
        ExpressionAttributeNames: { '#type': 'type', '#path': 'path', '#day': 'day', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':type': 'analytics_path', ':path': path, ':day': counts.day, ':ttl': ttl, ':requests': requests },
      },
    },
  };
}

/**
 * Adds one flush's counts to the project's day: the day row and the first path rows in one transaction, the
 * other path rows in more, each checking analytics is on. Analytics switched off (or the project gone) since
 * these requests were served: the counts are dropped.
 */
export async function addDayCounts(counts: DayCounts): Promise<void> {
  const ttl = epochSeconds(new Date(Date.parse(counts.day) + ROW_DAYS * 86_400_000));
  const paths = [...counts.paths];
  for (let start = 0, first = true; first || start < paths.length; start += PATH_ROWS_PER_TRANSACTION, first = false) {
    const writes = [analyticsOn(counts.projectId), ...(first ? [dayRow(counts, ttl)] : [])];
    for (const [path, requests] of paths.slice(start, start + PATH_ROWS_PER_TRANSACTION)) writes.push(pathRow(counts, path, requests, ttl));
    try {
      await transact(writes);
    } catch (error) {
      if (refusedAt(error, 'analytics_on')) return;
      throw error;
    }
  }
}

/** The project's day rows of the UTC days `from` to `to` (both included), and the requests of each path summed over them. */
export async function readAnalyticsRows(
  projectId: string,
  from: string,
  to: string,
): Promise<{ days: Map<string, AnalyticsDay>; paths: Map<string, number> }> {
  const { pk } = keys.analyticsDay(projectId, from);
  const items = await queryAll<AnalyticsDayItem | AnalyticsPathItem>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: {
      ':pk': pk,
      ':from': keys.analyticsDay(projectId, from).sk,
      ':to': `${keys.analyticsDay(projectId, to).sk}#~`,
    },
    ConsistentRead: true,
  });
  const days = new Map<string, AnalyticsDay>();
  const paths = new Map<string, number>();
  for (const item of items) {
    if (item.type === 'analytics_day') {
      days.set(item.day, {
        date: item.day,
        requests: Number(item.requests ?? 0),
        bytes: Number(item.bytes ?? 0),
        status_classes: {
          '2xx': Number(item.status_2xx ?? 0),
          '3xx': Number(item.status_3xx ?? 0),
          '4xx': Number(item.status_4xx ?? 0),
          '5xx': Number(item.status_5xx ?? 0),
        },
      });
    } else if (item.type === 'analytics_path') {
      paths.set(item.path, (paths.get(item.path) ?? 0) + Number(item.requests ?? 0));
    }
  }
  return { days, paths };
}

/** A project's day row: its counts are ADDed by the flush, so a count never added is absent. */
type AnalyticsDayItem = Stored<{
  type: 'analytics_day';
  day: string;
  requests?: number;
  bytes?: number;
  status_2xx?: number;
  status_3xx?: number;
  status_4xx?: number;
  status_5xx?: number;
}>;

/** A project's path row of a day: requests of one path, ADDed. */
type AnalyticsPathItem = Stored<{ type: 'analytics_path'; path: string; requests?: number }>;

/** Deletes every analytics row of the project (analytics switched off). */
export async function deleteProjectAnalytics(projectId: string): Promise<void> {
  const { pk } = keys.analyticsDay(projectId, '');
  const items = await queryAll<TableKey>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
  await batchWriteAll(items.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
}

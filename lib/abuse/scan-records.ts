import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { priorityRank, type ScanPriority } from './rules.ts';
import type { ScanMatch } from './scan-text.ts';
import { projectActiveCheck } from '../projects/active-check.ts';

/**
 * The rows of keyword scans and the items that list them (lib/abuse/scans.ts
 * queues, runs, lists and reviews them). Kept apart, with table access only,
 * because the abuse report intake and promote touch the listing too and
 * should not bundle the queue and S3 clients for it.
 *
 * Items:
 * - `ABUSESCAN#{id}` the scan record, one per publish, written `queued` at
 *   finalize and finished by the worker (a conditional write: a redelivered
 *   message never finishes it twice);
 * - `PROJECTSCANS#{project}` / `DEPLOYMENT#{deployment}` which scan belongs to
 *   a deployment (promote finds the scan of a deployment that is live again);
 * - `PROJECTSCANS#{project}` / `LATEST#{branch}` a copy of the row of the
 *   latest finished scan of that project and branch. It alone carries the
 *   listing index keys (`gsi2` `ABUSESCANS#{review_status}`, sorted by
 *   `orderKey`), so the admin listing is one index partition query.
 */

export const REVIEW_STATUSES = ['new', 'dismissed', 'actioned'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export const SCAN_STATUSES = ['queued', 'finished', 'failed'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

/** The branch of a direct-upload deployment, when the project names no default branch (uploads publish production). */
export const PRODUCTION_BRANCH = 'production';

/** Bytes read of one file; the rest is not scanned and the scan is `truncated`. */
export const scanFileMaxBytes = () => positive(process.env.ABUSE_SCAN_FILE_MAX_BYTES, 512 * 1024);
/** Bytes read in all for one scan; files past it are not scanned and the scan is `truncated`. */
export const scanMaxBytes = () => positive(process.env.ABUSE_SCAN_MAX_BYTES, 8 * 1024 * 1024);
/** Text files read for one scan at most. */
export const scanMaxFiles = () => positive(process.env.ABUSE_SCAN_MAX_FILES, 2000);

function positive(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** The spec's "Admin abuse scan row", every field and nothing else. */
export interface AbuseScanRow {
  branch: string;
  created_at: string;
  deployment_id: string;
  error: string | null;
  files_scanned: number;
  handled_at: string | null;
  handled_by: string | null;
  id: string;
  matches: ScanMatch[];
  priority: ScanPriority | null;
  project_id: string;
  report_count: number;
  resolution: string | null;
  review_status: ReviewStatus;
  scanned_at: string | null;
  score: number;
  site_host: string;
  status: ScanStatus;
  team_id: string;
  team_name: string | null;
  truncated: boolean;
}

const ROW_FIELDS = [
  'branch',
  'created_at',
  'deployment_id',
  'error',
  'files_scanned',
  'handled_at',
  'handled_by',
  'id',
  'matches',
  'priority',
  'project_id',
  'report_count',
  'resolution',
  'review_status',
  'scanned_at',
  'score',
  'site_host',
  'status',
  'team_id',
  'team_name',
  'truncated',
] as const satisfies readonly (keyof AbuseScanRow)[];

export function toScanRow(item: Record<string, unknown>): AbuseScanRow {
  const row: Record<string, unknown> = {};
  for (const field of ROW_FIELDS) row[field] = item[field] ?? null;
  row.report_count = Number(item.report_count ?? 0);
  row.files_scanned = Number(item.files_scanned ?? 0);
  row.score = Number(item.score ?? 0);
  row.truncated = item.truncated === true;
  row.matches = Array.isArray(item.matches) ? item.matches : [];
  return row as unknown as AbuseScanRow;
}

const SCORE_PAD = 9_999_999_999;
const TIME_PAD = 9_999_999_999_999;

/**
 * The listing's sort key: reported projects first, then priority (critical
 * first), then score (highest first), then the newest scan, then the id.
 * Each part is fixed width so the index sorts it as a string.
 */
export function orderKey(row: Pick<AbuseScanRow, 'report_count' | 'priority' | 'score' | 'scanned_at' | 'id'>): string {
  const reported = row.report_count > 0 ? '0' : '1';
  const priority = String(priorityRank(row.priority ?? 'none'));
  const score = String(SCORE_PAD - Math.min(row.score, SCORE_PAD)).padStart(10, '0');
  const at = String(TIME_PAD - Date.parse(row.scanned_at ?? '1970-01-01T00:00:00Z')).padStart(13, '0');
  return `${reported}#${priority}#${score}#${at}#${row.id}`;
}

export const listingKeys = (row: AbuseScanRow) => ({ gsi2pk: `ABUSESCANS#${row.review_status}`, gsi2sk: orderKey(row) });

/** Non-rejected abuse reports naming the project, counted by key (`PROJECTREPORTS#{project}`). */
export async function countProjectReports(projectId: string): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo().send(
      new QueryCommand({
        TableName: config.tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :report)',
        FilterExpression: '#status <> :rejected',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pk': `PROJECTREPORTS#${projectId}`, ':report': 'ABUSEREPORT#', ':rejected': 'rejected' },
        Select: 'COUNT',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

export interface ScanRecord extends Record<string, unknown> {
  id: string;
  project_id: string;
  team_id: string;
  deployment_id: string;
  slug: string;
  branch: string;
  deployed_at: string;
  status: ScanStatus;
}

export const getScan = async (id: string) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.abuseScan(id), ConsistentRead: true }))).Item as
    | ScanRecord
    | undefined;

export function latestItem(scan: Pick<ScanRecord, 'project_id' | 'branch' | 'deployed_at' | 'id'>, row: AbuseScanRow) {
  return {
    ...keys.abuseScanLatest(scan.project_id, scan.branch),
    ...listingKeys(row),
    type: 'abuse_scan_latest',
    ...row,
    scan_id: scan.id,
    deployed_at: scan.deployed_at,
  };
}

/**
 * Writes the current count of non-rejected reports onto the project's listed
 * scans (and moves them to the reported group of the order). Called after a
 * report names the project and after a scan is listed; the count only grows
 * until reports can be rejected (docs/trust-and-safety.md), so a stale,
 * smaller count never overwrites a larger one.
 */
export async function refreshReportCount(projectId: string): Promise<void> {
  const table = config.tableName();
  const latest = await dynamo().send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :latest)',
      ExpressionAttributeValues: { ':pk': `PROJECTSCANS#${projectId}`, ':latest': 'LATEST#' },
      ConsistentRead: true,
    }),
  );
  if (!latest.Items?.length) return;
  const count = await countProjectReports(projectId);
  for (const item of latest.Items) {
    if (Number(item.report_count ?? 0) >= count) continue;
    const row = toScanRow({ ...item, report_count: count });
    try {
      await dynamo().send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET report_count = :count, gsi2sk = :order',
          ConditionExpression: 'scan_id = :scan AND report_count < :count',
          ExpressionAttributeValues: { ':count': count, ':order': orderKey(row), ':scan': item.scan_id },
        }),
      );
    } catch (error) {
      // Replaced by a newer scan (which counted for itself) or already raised by a racing refresh.
      if (!isConditionalCheckFailure(error)) throw error;
    }
  }
}

/**
 * Promote made `deploymentId` live again: its finished scan becomes the latest
 * of its branch once more, as `new` (its earlier review was of a deployment
 * that was then superseded). Nothing happens when the deployment has no
 * finished scan (the worker lists it when it finishes: it is live).
 */
export async function reviveScanOfDeployment(projectId: string, deploymentId: string): Promise<void> {
  const table = config.tableName();
  const pointer = (
    await dynamo().send(
      new GetCommand({ TableName: table, Key: keys.abuseScanOfDeployment(projectId, deploymentId), ConsistentRead: true }),
    )
  ).Item;
  if (!pointer) return;
  const scan = await getScan(pointer.scan_id as string);
  if (!scan || scan.status !== 'finished') return;
  const current = (
    await dynamo().send(new GetCommand({ TableName: table, Key: keys.abuseScanLatest(projectId, scan.branch), ConsistentRead: true }))
  ).Item;
  if (current?.scan_id === scan.id) return;
  const reviewReset = { review_status: 'new' as const, handled_at: null, handled_by: null, resolution: null };
  const row = toScanRow({ ...scan, ...reviewReset, report_count: await countProjectReports(projectId) });
  await dynamo().send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: table, Item: latestItem(scan, row) } },
        // Not for a project on its way out (lib/projects/deletion.ts removes its listing items).
        projectActiveCheck(projectId),
        {
          Update: {
            TableName: table,
            Key: keys.abuseScan(scan.id),
            UpdateExpression: 'SET review_status = :new, handled_at = :null, handled_by = :null, resolution = :null, report_count = :count',
            ExpressionAttributeValues: { ':new': 'new', ':null': null, ':count': row.report_count },
          },
        },
      ],
    }),
  );
}

/**
 * A removed project's scans leave the listing: its `PROJECTSCANS#` partition
 * (the listed `LATEST#` items and the deployment pointers) is deleted. The
 * `ABUSESCAN#` records stay, as trust-and-safety records (like the reports).
 */
export async function forgetProjectScans(projectId: string): Promise<void> {
  const items = await queryAll({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': `PROJECTSCANS#${projectId}` },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
  await batchWriteAll(items.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
}

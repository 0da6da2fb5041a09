import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll, readIndexPage } from '../db/query.ts';
import { type NamedWrite, TransactionRefused, transact } from '../db/transact.ts';
import { projectIsActive } from '../projects/records.ts';
import { type AbuseScanRow, listingKeys, orderKey, type ReviewStatus, type ScanStatus, toScanRow } from './scan-row.ts';
import { getItem, type PageKey, pageKey, type TableKey } from '../db/item.ts';

/**
 * The records of keyword scans and the items that list them (lib/abuse/scans.ts
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

/** The branch of a direct-upload deployment, when the project names no default branch (uploads publish production). */
export const PRODUCTION_BRANCH = 'production';

/** Non-rejected abuse reports naming the project, counted by key (`PROJECTREPORTS#{project}`). */
export async function countProjectReports(projectId: string): Promise<number> {
  let count = 0;
  let start: PageKey | undefined;
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
    start = pageKey(page.LastEvaluatedKey);
  } while (start);
  return count;
}

/** Which publish a scan is of. */
interface ScanOfPublish {
  id: string;
  project_id: string;
  team_id: string;
  deployment_id: string;
  slug: string;
  branch: string;
  deployed_at: string;
}

/**
 * The stored scan (`ABUSESCAN#`): what its publish knew, `queued` and `new` from the start; the row's figures once it
 * finished (or its `error` once it failed), and the review's fields once an administrator decided.
 */
export type ScanRecord = ScanOfPublish &
  Partial<Omit<AbuseScanRow, keyof ScanOfPublish | 'status'>> & {
    status: ScanStatus;
    site_host?: string;
    ruleset_version?: string;
    /** Pattern matches over all rules. */
    hits?: number;
  };

/** A branch's listed row (`LATEST#`): its latest finished scan's row, which scan that is and when it was published. */
export type LatestScanItem = TableKey &
  AbuseScanRow & { type: 'abuse_scan_latest'; scan_id: string; deployed_at: string; gsi2pk: string; gsi2sk: string };

export const getScan = async (id: string) => (await getItem<ScanRecord>(keys.abuseScan(id), true)) ?? undefined;

function latestItem(scan: Pick<ScanRecord, 'project_id' | 'branch' | 'deployed_at' | 'id'>, row: AbuseScanRow) {
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
  const current = await getLatestOfBranch(projectId, scan.branch);
  if (current?.scan_id === scan.id) return;
  const reviewReset = { review_status: 'new' as const, handled_at: null, handled_by: null, resolution: null };
  const row = toScanRow({ ...scan, ...reviewReset, report_count: await countProjectReports(projectId) });
  await transact([
    { name: 'latest', write: { Put: { Item: latestItem(scan, row) } } },
    // Not for a project on its way out (lib/lifecycle/project-deletion.ts removes its listing items).
    projectIsActive(projectId),
    {
      name: 'record',
      write: {
        Update: {
          Key: keys.abuseScan(scan.id),
          UpdateExpression: 'SET review_status = :new, handled_at = :null, handled_by = :null, resolution = :null, report_count = :count',
          ExpressionAttributeValues: { ':new': 'new', ':null': null, ':count': row.report_count },
        },
      },
    },
  ]);
}

/**
 * A removed project's scans leave the listing: its `PROJECTSCANS#` partition
 * (the listed `LATEST#` items and the deployment pointers) is deleted. The
 * `ABUSESCAN#` records stay, as trust-and-safety records (like the reports).
 */
export async function forgetProjectScans(projectId: string): Promise<void> {
  const items = await queryAll<TableKey>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': `PROJECTSCANS#${projectId}` },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
  await batchWriteAll(items.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
}

/** The listed row of a project's branch: the latest finished scan's copy (null when none is listed). */
export function getLatestOfBranch(projectId: string, branch: string): Promise<LatestScanItem | null> {
  return getItem<LatestScanItem>(keys.abuseScanLatest(projectId, branch), true);
}

/** What a publish knows of its scan. */
export interface QueuedScan extends ScanOfPublish {
  site_host: string;
  ruleset_version: string;
}

/**
 * The records of a publish's scan, for the publish's commit transaction: the scan, `queued`, and the
 * deployment's marker, which allows one scan per deployment (the commit it rides in happens once per
 * deployment, too).
 */
export function queuedScanWrites(scan: QueuedScan): NamedWrite[] {
  const record = {
    ...keys.abuseScan(scan.id),
    type: 'abuse_scan',
    ...scan,
    status: 'queued',
    review_status: 'new',
    created_at: scan.deployed_at,
  };
  const marker = { ...keys.abuseScanOfDeployment(scan.project_id, scan.deployment_id), type: 'abuse_scan_of_deployment', scan_id: scan.id };
  return [
    { name: 'scan', write: { Put: { Item: record, ConditionExpression: 'attribute_not_exists(pk)' } } },
    { name: 'scan_of_deployment', write: { Put: { Item: marker, ConditionExpression: 'attribute_not_exists(pk)' } } },
  ];
}

/** A queued scan ends `failed` with its `error`; a scan no longer queued (a redelivered message) is left alone. */
export async function markScanFailed(scanId: string, error: string, at: string): Promise<void> {
  await dynamo()
    .send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.abuseScan(scanId),
        UpdateExpression: 'SET #status = :failed, #error = :error, scanned_at = :now',
        ConditionExpression: '#status = :queued',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
        ExpressionAttributeValues: { ':failed': 'failed', ':queued': 'queued', ':error': error, ':now': at },
      }),
    )
    .catch((e: unknown) => {
      if (!isConditionalCheckFailure(e)) throw e;
    });
}

/**
 * Records a queued scan finished and lists its row as the latest of its branch, in one transaction:
 * `listed`. When a later deployment's scan holds the branch, or the project is going, it is recorded
 * and not listed: `recorded`. A scan no longer queued (finished by a redelivered message) is left
 * alone: `skipped`. `live`: the deployment production serves now is the latest whatever its age
 * (a rollback before its scan finished).
 */
export async function finishScan(finished: ScanRecord, row: AbuseScanRow, live: boolean): Promise<'listed' | 'recorded' | 'skipped'> {
  const finishRecord = {
    Item: { ...finished, ...keys.abuseScan(finished.id) },
    ConditionExpression: '#status = :queued',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':queued': 'queued' },
  };
  const unlessLater = {
    ConditionExpression: 'attribute_not_exists(pk) OR deployed_at <= :mine',
    ExpressionAttributeValues: { ':mine': finished.deployed_at },
  };
  try {
    await transact([
      { name: 'record', write: { Put: finishRecord } },
      { name: 'latest', write: { Put: { Item: latestItem(finished, row), ...(live ? {} : unlessLater) } } },
      // A project being deleted (its listing items removed by lib/lifecycle/project-deletion.ts) is never listed again.
      projectIsActive(finished.project_id),
    ]);
    return 'listed';
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    if (error.failed.has('record')) return 'skipped';
  }
  try {
    await dynamo().send(new PutCommand({ TableName: config.tableName(), ...finishRecord }));
    return 'recorded';
  } catch (e) {
    if (isConditionalCheckFailure(e)) return 'skipped';
    throw e;
  }
}

export interface ScanReview {
  review_status: Exclude<ReviewStatus, 'new'>;
  handled_at: string;
  handled_by: string;
  resolution: string | null;
}

/**
 * An administrator's decision, on the scan and on its listed row, in one transaction conditioned on the
 * scan still being the listed one of its branch and still `new`: false when it is not (of racing
 * reviews one wins).
 */
export async function recordReview(scan: Pick<ScanRecord, 'id' | 'project_id' | 'branch'>, review: ScanReview): Promise<boolean> {
  const values = {
    ':status': review.review_status,
    ':new': 'new',
    ':at': review.handled_at,
    ':by': review.handled_by,
    ':resolution': review.resolution,
  };
  const decided = 'SET review_status = :status, handled_at = :at, handled_by = :by, resolution = :resolution';
  try {
    await transact([
      {
        name: 'latest',
        write: {
          Update: {
            Key: keys.abuseScanLatest(scan.project_id, scan.branch),
            UpdateExpression: `${decided}, gsi2pk = :partition`,
            ConditionExpression: 'scan_id = :scan AND review_status = :new',
            ExpressionAttributeValues: { ...values, ':scan': scan.id, ':partition': `ABUSESCANS#${review.review_status}` },
          },
        },
      },
      {
        name: 'record',
        write: {
          Update: {
            Key: keys.abuseScan(scan.id),
            UpdateExpression: decided,
            ConditionExpression: 'review_status = :new',
            ExpressionAttributeValues: values,
          },
        },
      },
    ]);
    return true;
  } catch (error) {
    if (error instanceof TransactionRefused) return false;
    throw error;
  }
}

/** One page of the listed rows of a review status, in the listing's order (index `gsi2`). */
export async function listedScansPage(reviewStatus: ReviewStatus, page: number, pageSize: number) {
  const { total, items } = await readIndexPage<ScanRecord>({
    tableName: config.tableName(),
    indexName: 'gsi2',
    partition: { name: 'gsi2pk', value: `ABUSESCANS#${reviewStatus}` },
    page,
    pageSize,
  });
  return { total, rows: items.map(toScanRow) };
}

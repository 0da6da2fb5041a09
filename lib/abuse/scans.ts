import { randomUUID } from 'node:crypto';
import { getObject, S3LiteError } from '../aws/s3-lite.ts';
import { sendMessage } from '../aws/sqs-lite.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { ABUSE_SCAN_ALREADY_REVIEWED, ABUSE_SCAN_NOT_FOUND, ABUSE_SCAN_SUPERSEDED } from '../errors/catalogue/admin.ts';
import { logger } from '../logger.ts';
import { getProjectItem } from '../projects/records.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
import { manifestObjectKey, routeManifestKey } from '../sites/storage-keys.ts';
import { getTeamItem } from '../teams/records.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { RULESET_VERSION } from './rules.ts';
import { isScannedText, newTally, scanText, summarize } from './scan-text.ts';
import { addBlobScan, blobScanOf, loadScanCache, saveScanCache, type BlobScan } from './scan-cache.ts';
import {
  countProjectReports,
  finishScan,
  getLatestOfBranch,
  getScan,
  listedScansPage,
  markScanFailed,
  PRODUCTION_BRANCH,
  queuedScanWrites,
  recordReview,
  refreshReportCount,
  type ScanRecord,
} from './scan-records.ts';
import { type AbuseScanRow, type ReviewStatus, toScanRow } from './scan-row.ts';

export { REVIEW_STATUSES, type ReviewStatus } from './scan-row.ts';

/**
 * Keyword scans of published deployments (issue 11 item 2; spec "Admin abuse
 * scan row" and endpoint 18): queued at publish, run by the abuse-scans
 * worker, listed and reviewed by platform administrators. The items and the
 * listing's order are in lib/abuse/scan-records.ts; the whole design in
 * docs/trust-and-safety.md ("Keyword scans").
 */

// ---------------------------------------------------------------------------
// Queueing, at publish

export interface QueueScanInput {
  projectId: string;
  teamId: string;
  deploymentId: string;
  slug: string;
  subdomain: string;
  branch: string | null | undefined;
  /** When the deployment went live: which scan of a branch is the latest. */
  deployedAt: string;
}

/**
 * The keyword scan of a publish: its records (`queued`, and the deployment's
 * marker that allows one scan per deployment), written by the publish's commit
 * transaction, and its queueing once that transaction committed. The queueing
 * never fails the publish: a lost scan is logged.
 */
export function abuseScanOfPublish(input: QueueScanInput) {
  const id = randomUUID();
  return {
    writes: queuedScanWrites({
      id,
      project_id: input.projectId,
      team_id: input.teamId,
      deployment_id: input.deploymentId,
      slug: input.slug,
      branch: input.branch || PRODUCTION_BRANCH,
      site_host: `${input.subdomain}.${config.siteDomain()}`,
      deployed_at: input.deployedAt,
      ruleset_version: RULESET_VERSION,
    }),
    queue: async (): Promise<string | null> => {
      try {
        await sendMessage({ queueUrl: config.queueUrl('abuseScans'), body: JSON.stringify({ scan_id: id }) });
        return id;
      } catch (error) {
        logger.warn('abuse scan not queued', { project_id: input.projectId, deployment_id: input.deploymentId, error: String(error) });
        return null;
      }
    },
  };
}

// ---------------------------------------------------------------------------
// The worker

async function readCapped(bucket: string, key: string, maxBytes: number): Promise<{ text: string; read: number; cut: boolean }> {
  const object = await getObject(bucket, key);
  const chunks: Buffer[] = [];
  let read = 0;
  let cut = false;
  const stream = object.body;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    if (read + buf.length > maxBytes) {
      chunks.push(buf.subarray(0, maxBytes - read));
      read = maxBytes;
      cut = true;
      break;
    }
    chunks.push(buf);
    read += buf.length;
  }
  if (cut) stream.destroy();
  return { text: Buffer.concat(chunks).toString('utf8'), read, cut };
}

/** Whether a content's earlier result is what reading it under this cap would give (the budget may cap it shorter). */
const reusable = (blob: BlobScan, cap: number, fileCap: number) => (blob.cut ? cap >= fileCap : blob.read <= cap);

export type DeploymentScan = { files_scanned: number; truncated: boolean; files_read: number } & ReturnType<typeof summarize>;

/**
 * Runs the rule set over the deployment's text files, in path order, within the caps. With `reuse`, a content
 * the project's earlier scan already scanned (by hash, lib/abuse/scan-cache.ts) is not read again: its result
 * is carried forward, exactly as reading it would have been; what this scan saw is kept for the next one.
 * `files_read` counts the files read from storage.
 */
export async function scanDeploymentFiles(
  scan: Pick<ScanRecord, 'team_id' | 'project_id' | 'slug' | 'deployment_id'>,
  options: { reuse: boolean },
): Promise<DeploymentScan> {
  const bucket = config.bucket('sites');
  const fileCap = config.abuseScanFileMaxBytes();
  const [manifestText, earlier] = await Promise.all([
    getObject(bucket, routeManifestKey(scan.team_id, scan.slug, scan.deployment_id)).then((o) => o.transformToString()),
    options.reuse ? loadScanCache(scan.team_id, scan.project_id, fileCap) : Promise.resolve(new Map<string, BlobScan>()),
  ]);
  const manifest = JSON.parse(manifestText) as RouteManifest;
  const tally = newTally();
  const kept = new Map<string, BlobScan>();
  const maxFiles = config.abuseScanMaxFiles();
  let budget = config.abuseScanMaxBytes();
  let filesScanned = 0;
  let filesRead = 0;
  let truncated = false;
  for (const path of Object.keys(manifest.files).sort()) {
    const file = manifest.files[path]!;
    if (!isScannedText(path, file.content_type)) continue;
    if (filesScanned >= maxFiles || budget <= 0) {
      truncated = true;
      break;
    }
    const key = manifestObjectKey(manifest, path, file);
    if (!key) continue;
    const cap = Math.min(fileCap, budget);
    let blob = earlier.get(file.hash) ?? kept.get(file.hash);
    if (!blob || !reusable(blob, cap, fileCap)) {
      const { text, read, cut } = await readCapped(bucket, key, cap);
      const own = newTally();
      scanText(own, path, text);
      blob = blobScanOf(own, read, Buffer.byteLength(text, 'utf8'), cut);
      filesRead += 1;
    }
    // Only a result read under the full per-file cap is what a later scan may carry (the budget cuts differ).
    if (cap >= fileCap || !blob.cut) kept.set(file.hash, blob);
    addBlobScan(tally, path, blob);
    if (blob.cut) truncated = true;
    budget -= blob.bytes;
    filesScanned += 1;
  }
  if (options.reuse) await saveScanCache(scan.team_id, scan.project_id, fileCap, kept);
  return { files_scanned: filesScanned, truncated, files_read: filesRead, ...summarize(tally) };
}

/**
 * Runs one queued scan and records it. A scan already finished (a redelivered
 * message) is left alone. A deployment whose route manifest is gone (deleted
 * since) ends `failed` with its `error`; any other failure throws, for SQS to retry.
 */
export async function runAbuseScan(scanId: string): Promise<'finished' | 'failed' | 'skipped'> {
  const scan = await getScan(scanId);
  if (!scan || scan.status !== 'queued') return 'skipped';

  let result: DeploymentScan;
  try {
    result = await scanDeploymentFiles(scan, { reuse: true });
  } catch (error) {
    if (!(error instanceof S3LiteError && error.$metadata.httpStatusCode === 404)) throw error;
    await markScanFailed(scanId, 'The deployment has no route manifest any more.', new Date().toISOString());
    return 'failed';
  }

  const [team, project, reportCount] = await Promise.all([
    getTeamItem(scan.team_id),
    getProjectItem(scan.project_id, true),
    countProjectReports(scan.project_id),
  ]);
  const finished = {
    ...scan,
    status: 'finished' as const,
    error: null,
    files_scanned: result.files_scanned,
    truncated: result.truncated,
    matches: result.matches,
    hits: result.hits,
    score: result.score,
    priority: result.priority,
    team_name: team?.name ?? null,
    report_count: reportCount,
    review_status: 'new' as const,
    handled_at: null,
    handled_by: null,
    resolution: null,
    scanned_at: new Date().toISOString(),
  };
  const outcome = await finishScan(finished, toScanRow(finished), project?.live_deployment_id === scan.deployment_id);
  if (outcome === 'skipped') return 'skipped';
  // A later deployment's scan holds the branch, or the project is going: this one is recorded, not listed.
  if (outcome === 'recorded') return 'finished';
  // A report recorded between the count above and this write would be missed: count again.
  await refreshReportCount(scan.project_id);
  return 'finished';
}

// ---------------------------------------------------------------------------
// Admin listing (spec endpoint 18) and review

/** One page of the listed scans of a review status, in index order (admin use, and a queue an admin keeps short). */
export async function listAbuseScans(input: { reviewStatus: ReviewStatus; page: number; pageSize: number }) {
  const { total, rows } = await listedScansPage(input.reviewStatus, input.page, input.pageSize);
  return { page: input.page, page_size: input.pageSize, total, scans: rows };
}

/**
 * An administrator's decision on a listed scan: `new` to `dismissed` or
 * `actioned`, once. One transaction conditioned on the scan still being the
 * listed one of its branch and still `new`, so of racing reviews one wins and
 * the others get 409.
 */
export async function reviewAbuseScan(
  id: string,
  decision: { review_status: Exclude<ReviewStatus, 'new'>; resolution?: string | null },
  handledBy: string,
): Promise<AbuseScanRow> {
  if (!UUID_PATTERN.test(id)) throw new ApiError(ABUSE_SCAN_NOT_FOUND);
  const scan = await getScan(id.toLowerCase());
  if (!scan || scan.status !== 'finished') throw new ApiError(ABUSE_SCAN_NOT_FOUND);
  const resolution = decision.resolution?.trim() ? decision.resolution.trim() : null;
  const decided = { review_status: decision.review_status, handled_at: new Date().toISOString(), handled_by: handledBy, resolution };
  if (!(await recordReview(scan, decided))) {
    const latest = await getLatestOfBranch(scan.project_id, scan.branch);
    if (latest?.scan_id !== scan.id) throw new ApiError(ABUSE_SCAN_SUPERSEDED, { details: { latest_scan_id: latest?.scan_id ?? null } });
    throw new ApiError(ABUSE_SCAN_ALREADY_REVIEWED, { details: { review_status: latest.review_status } });
  }
  const latest = await getLatestOfBranch(scan.project_id, scan.branch);
  // A publish may have replaced the listed scan since: then answer from the record, which holds the same decision.
  return toScanRow(latest?.scan_id === scan.id ? latest : { ...scan, ...decided });
}

import { deleteProjectSchedules } from '../functions/schedules.ts';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { getObject } from '../aws/s3-lite.ts';
import { deletePrefix } from '../aws/s3-prefixes.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { refusedAt, transact } from '../db/transact.ts';
import { removeProjectDomains } from '../domains/removal.ts';
import { ApiError } from '../errors/api-error.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { deleteProjectAnalytics } from '../sites/analytics-records.ts';
import { routeManifestKey } from '../sites/storage-keys.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
import { forgetHeldBlobs, heldBlobs } from '../publishing/blob-records.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';
import { discardSessions, projectSessions, slotsOfRemovedSessions } from '../publishing/sessions.ts';
import { readManifest } from '../publishing/stored-manifest.ts';
import { cancelProvisionalExpiry } from '../projects/provisional.ts';
import { getProjectItem, markDeleting, projectPartition, removedProjectWrites } from '../projects/records.ts';
import { forgetProjectScans } from '../abuse/scan-records.ts';
import { scanCachePrefix } from '../abuse/scan-cache.ts';
import { claimsFor, releaseProjectHostnames } from '../functions/hostname-claim-records.ts';
import { deleteProjectInvocations } from '../functions/invocations.ts';

/**
 * Deleting a project: `DELETE /api/v1/projects/{id}` sets `deleting` (one
 * conditional write, so two requests claim it once and a publish racing it
 * fails on its own `active` condition) and queues the removal; the deletions
 * worker removes everything the project owns, then the project. The removal
 * is idempotent: a redelivered message, or a retry after a crash, resumes it.
 */

const deleteItems = (itemKeys: { pk: string; sk: string }[]) => batchWriteAll(itemKeys.map((Key) => ({ DeleteRequest: { Key } })));

/** Claims the project for deletion and queues its removal. A project already deleting is queued again (idempotent). */
export async function requestProjectDeletion(projectId: string, now = new Date()): Promise<{ id: string; status: 'deleting' }> {
  if (!(await markDeleting(projectId, now))) throw new ApiError(PROJECT_NOT_FOUND);
  await sqs().send(
    new SendMessageCommand({
      QueueUrl: config.queueUrl('deletions'),
      MessageBody: JSON.stringify({ kind: 'project', project_id: projectId }),
    }),
  );
  return { id: projectId, status: 'deleting' };
}

export type DeletionOutcome = 'deleted' | 'gone' | 'kept';

/** The deletions worker's job for one project: removes it if it is `deleting`. */
export async function deleteProject(projectId: string): Promise<DeletionOutcome> {
  const project = await getProjectItem(projectId, true);
  if (!project) return 'gone';
  if (project.status !== 'deleting') return 'kept';
  return (await removeProject(project)) ? 'deleted' : 'gone';
}

/**
 * The team's records of blobs stored in the project's folder: they must not keep pointing there, or its
 * next upload of the same bytes would be told they are held.
 */
async function forgetBlobsStoredIn(project: Record<string, unknown>, sessions: UploadSessionRecord[], deploymentIds: string[]) {
  const teamId = project.team_id as string;
  const slug = project.slug as string;
  const projectFolder = `${teamId}/${slug}/`;
  const hashes = new Set<string>();
  for (const session of sessions) {
    const manifest = await readManifest(session).catch(() => null);
    for (const hash of manifest?.placements.keys() ?? []) hashes.add(hash);
  }
  for (const deploymentId of deploymentIds) {
    const text = await getObject(config.bucket('sites'), routeManifestKey(teamId, slug, deploymentId))
      .then((o) => o.transformToString())
      .catch(() => null);
    if (!text) continue;
    for (const file of Object.values((JSON.parse(text) as RouteManifest).files)) hashes.add(file.hash);
  }
  const pointingHere = [...(await heldBlobs(teamId, [...hashes])).values()].filter(
    (blob) => blob.project_id === project.id && blob.object_key.startsWith(projectFolder),
  );
  await forgetHeldBlobs(teamId, pointingHere);
}

/**
 * What the project owns outside its partition: function hostname claims, schedules and queued invocations, custom
 * domains, objects (bundles, screenshots, scan cache, the site folder), analytics rows, its keyword scans
 * in the admin listing.
 */
async function removeOwnedElsewhere(project: Record<string, unknown>, functionNames: string[]) {
  const projectId = project.id as string;
  const teamId = project.team_id as string;
  // Every hostname label the project holds (its index key), and those of its functions on its current subdomain
  // (claims written before they carried the index key): another project may take them at once.
  const current = claimsFor(functionNames, project.subdomain as string).map((c) => c.label);
  await releaseProjectHostnames(projectId, new Set(), current);
  // Its functions' Scheduler schedules: none is left to tick (their records go with the partition after this).
  await deleteProjectSchedules(projectId);
  await removeProjectDomains(projectId);
  // Its queued invocations: records, stored requests, results and console output (not left to their TTL).
  await deleteProjectInvocations(projectId, functionNames);
  await deletePrefix(config.bucket('bundles'), `functions/${teamId}/${projectId}/`);
  await deletePrefix(config.bucket('bundles'), `screenshots/${teamId}/${projectId}/`);
  await deletePrefix(config.bucket('bundles'), scanCachePrefix(teamId, projectId));
  await deletePrefix(config.bucket('sites'), `${teamId}/${project.slug as string}/`);
  await deleteProjectAnalytics(projectId);
  // Its keyword scans leave the admin listing; the scan records stay, like the abuse reports naming it.
  await forgetProjectScans(projectId);
}

/**
 * Removes a project whose status is `deleting`, and everything it owns:
 * upload sessions and their manifests, deployments, functions (records,
 * bundles, hostname claims), custom domains (their hostname claims and managed
 * zones), environment variables, analytics rows, its objects and screenshots,
 * the team's records of blobs stored in its folder, its schedule,
 * then the project with its subdomain and name holds and its place in the
 * team's count. Safe to run again on a partly removed project, and beside
 * another run of itself (a queue delivers at least once): whichever run
 * deletes the project item last answers true, the other false.
 */
export async function removeProject(project: Record<string, unknown>): Promise<boolean> {
  const projectId = project.id as string;
  const sessions = await projectSessions(projectId);
  const owned = await projectPartition(projectId);
  const deploymentIds = owned
    .filter((item) => (item.sk as string).startsWith('DEPLOYMENT#'))
    .map((item) => (item.sk as string).slice('DEPLOYMENT#'.length));
  const functionNames = owned.filter((item) => (item.sk as string).startsWith('FUNCTION#')).map((fn) => fn.name as string);

  await forgetBlobsStoredIn(project, sessions, deploymentIds);
  await discardSessions(sessions);
  await removeOwnedElsewhere(project, functionNames);
  // Everything in the project's partition but the project item itself, which goes last, with its holds.
  await deleteItems(owned.filter((item) => item.sk !== 'PROJECT').map((item) => ({ pk: item.pk as string, sk: item.sk as string })));
  try {
    await transact([...removedProjectWrites(project), ...slotsOfRemovedSessions(project.team_id as string, sessions)]);
  } catch (error) {
    // The project item is gone: a concurrent run removed it, its holds and its place in the count.
    if (refusedAt(error, 'project') && !(await getProjectItem(projectId, true))) return false;
    throw error;
  }
  await cancelProvisionalExpiry(projectId).catch(() => undefined);
  return true;
}

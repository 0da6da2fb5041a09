import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { refusedAt, transact } from '../db/transact.ts';
import { removeProjectDomains } from '../domains/removal.ts';
import { ApiError } from '../errors/api-error.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { purgeProjectScans } from '../abuse/purge.ts';
import { purgeProjectFunctions } from '../functions/purge.ts';
import { cancelProvisionalExpiry } from '../projects/provisional.ts';
import { getProjectItem, markDeleting, projectPartition, removedProjectWrites, type ProjectItem } from '../projects/records.ts';
import { purgeProjectUploads } from '../publishing/purge.ts';
import { projectSessions, slotsOfRemovedSessions } from '../publishing/sessions.ts';
import { purgeProjectScreenshots } from '../screenshots/purge.ts';
import { purgeProjectSite } from '../sites/purge.ts';

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
 * What the project owns outside its partition, each area's part removed by that area: function hostname claims,
 * schedules, queued invocations and bundles; custom domains; screenshots; the keyword scan cache and listing; the
 * site folder and analytics rows.
 */
async function removeOwnedElsewhere(project: ProjectItem, functionNames: string[]) {
  const owner = { id: project.id, teamId: project.team_id };
  await purgeProjectFunctions({ ...owner, subdomain: project.subdomain }, functionNames);
  await removeProjectDomains(owner.id);
  await purgeProjectScreenshots(owner);
  await purgeProjectScans(owner);
  await purgeProjectSite({ ...owner, slug: project.slug });
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
export async function removeProject(project: ProjectItem): Promise<boolean> {
  const projectId = project.id;
  const sessions = await projectSessions(projectId);
  const owned = await projectPartition(projectId);
  const deploymentIds = owned.filter((item) => item.sk.startsWith('DEPLOYMENT#')).map((item) => item.sk.slice('DEPLOYMENT#'.length));
  // The partition's items of every kind say `name?`; a function's item always has its name.
  const functionNames = owned
    .filter((item): item is typeof item & { name: string } => item.sk.startsWith('FUNCTION#'))
    .map((fn) => fn.name);

  await purgeProjectUploads({ id: projectId, teamId: project.team_id, slug: project.slug }, sessions, deploymentIds);
  await removeOwnedElsewhere(project, functionNames);
  // Everything in the project's partition but the project item itself, which goes last, with its holds.
  await deleteItems(owned.filter((item) => item.sk !== 'PROJECT').map((item) => ({ pk: item.pk, sk: item.sk })));
  try {
    await transact([...removedProjectWrites(project), ...slotsOfRemovedSessions(project.team_id, sessions)]);
  } catch (error) {
    // The project item is gone: a concurrent run removed it, its holds and its place in the count.
    if (refusedAt(error, 'project') && !(await getProjectItem(projectId, true))) return false;
    throw error;
  }
  await cancelProvisionalExpiry(projectId).catch(() => undefined);
  return true;
}

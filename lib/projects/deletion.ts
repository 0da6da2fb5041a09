import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { deleteObject, getObject } from '../aws/s3-lite.ts';
import { sqs } from '../aws/sqs.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { conditionFailedAt, isConditionalCheckFailure, isTransactionCanceled } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { deletePrefix } from '../deployments/publish.ts';
import { removeProjectDomains } from '../domains/removal.ts';
import { ApiError } from '../errors/api-error.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue.ts';
import { deleteProjectAnalytics } from '../sites/analytics.ts';
import { routeManifestKey } from '../sites/storage-keys.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
import { forgetHeldBlobs, heldBlobs } from '../uploads/blobs.ts';
import { readManifest } from '../uploads/stored-manifest.ts';
import { receivedEntryKeys } from '../uploads/received.ts';
import type { UploadSessionRecord } from '../uploads/sessions.ts';
import { cancelProvisionalExpiry } from './provisional.ts';
import { forgetProjectScans } from '../abuse/scan-rows.ts';
import { scanCachePrefix } from '../abuse/scan-cache.ts';
import { claimsFor, releaseProjectHosts } from '../functions/host-claims.ts';
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
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(projectId),
        UpdateExpression: 'SET #status = :deleting, deletion_requested_at = if_not_exists(deletion_requested_at, :now), updated_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND #status IN (:active, :deleting)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':deleting': 'deleting', ':active': 'active', ':now': now.toISOString() },
      }),
    );
  } catch (error) {
    if (isConditionalCheckFailure(error)) throw new ApiError(PROJECT_NOT_FOUND);
    throw error;
  }
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
  const project = (
    await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.project(projectId), ConsistentRead: true }))
  ).Item;
  if (!project) return 'gone';
  if (project.status !== 'deleting') return 'kept';
  return (await removeProject(project)) ? 'deleted' : 'gone';
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
  const table = config.tableName();
  const projectId = project.id as string;
  const teamId = project.team_id as string;
  const slug = project.slug as string;
  const projectFolder = `${teamId}/${slug}/`;

  const sessions = await queryAll({
    TableName: table,
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.uploadSessionByProject(projectId, '', '').gsi1pk },
  });
  const owned = await queryAll({
    TableName: table,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.project(projectId).pk },
    ConsistentRead: true,
  });
  const deployments = owned.filter((item) => (item.sk as string).startsWith('DEPLOYMENT#'));
  const functions = owned.filter((item) => (item.sk as string).startsWith('FUNCTION#'));

  // Blobs stored in the project's folder: the team's records of them must not keep pointing there,
  // or its next upload of the same bytes would be told they are held.
  const hashes = new Set<string>();
  for (const session of sessions) {
    const manifest = await readManifest(session as unknown as UploadSessionRecord).catch(() => null);
    for (const hash of manifest?.placements.keys() ?? []) hashes.add(hash);
  }
  for (const deployment of deployments) {
    const deploymentId = (deployment.sk as string).slice('DEPLOYMENT#'.length);
    const text = await getObject(config.bucket('sites'), routeManifestKey(teamId, slug, deploymentId))
      .then((o) => o.transformToString())
      .catch(() => null);
    if (!text) continue;
    for (const file of Object.values((JSON.parse(text) as RouteManifest).files)) hashes.add(file.hash);
  }
  const pointingHere = [...(await heldBlobs(teamId, [...hashes])).values()].filter(
    (blob) => blob.project_id === projectId && blob.object_key.startsWith(projectFolder),
  );
  await forgetHeldBlobs(teamId, pointingHere);

  for (const session of sessions) {
    await deleteItems([keys.uploadSession(session.upload_id as string), ...(await receivedEntryKeys(session.upload_id as string))]);
    await deleteObject(config.bucket('bundles'), session.manifest_key as string).catch(() => undefined);
  }
  // Every hostname label the project holds (its index key), and those of its functions on its current subdomain
  // (claims written before they carried the index key): another project may take them at once.
  const current = claimsFor(
    functions.map((fn) => fn.name as string),
    project.subdomain as string,
  ).map((c) => c.label);
  await releaseProjectHosts(projectId, new Set(), current);
  await removeProjectDomains(projectId);
  // Its queued invocations: records, stored requests, results and console output (not left to their TTL).
  await deleteProjectInvocations(
    projectId,
    functions.map((fn) => fn.name as string),
  );
  await deletePrefix(config.bucket('bundles'), `functions/${teamId}/${projectId}/`);
  await deletePrefix(config.bucket('bundles'), `screenshots/${teamId}/${projectId}/`);
  await deletePrefix(config.bucket('bundles'), scanCachePrefix(teamId, projectId));
  await deletePrefix(config.bucket('sites'), projectFolder);
  await deleteProjectAnalytics(projectId);
  // Its keyword scans leave the admin listing; the scan records stay, like the abuse reports naming it.
  await forgetProjectScans(projectId);
  // Everything in the project's partition but the project item itself, which goes last, with its holds.
  await deleteItems(owned.filter((item) => item.sk !== 'PROJECT').map((item) => ({ pk: item.pk as string, sk: item.sk as string })));

  const heldBy = { ':project': projectId };
  const openSlots = sessions.map((s) => s.upload_id as string);
  const finalWrite = dynamo().send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Delete: {
            TableName: table,
            Key: keys.project(projectId),
            ConditionExpression: '#status = :deleting',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':deleting': 'deleting' },
          },
        },
        {
          Delete: {
            TableName: table,
            Key: keys.subdomainHold(project.subdomain as string),
            ConditionExpression: 'attribute_not_exists(pk) OR project_id = :project',
            ExpressionAttributeValues: heldBy,
          },
        },
        {
          Delete: {
            TableName: table,
            Key: keys.projectName(teamId, project.name as string),
            ConditionExpression: 'attribute_not_exists(pk) OR project_id = :project',
            ExpressionAttributeValues: heldBy,
          },
        },
        {
          Update: {
            TableName: table,
            Key: keys.teamProjectCount(teamId),
            UpdateExpression: 'SET project_count = project_count - :one',
            ConditionExpression: 'project_count > :zero',
            ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
          },
        },
        ...(openSlots.length > 0
          ? [
              {
                Update: {
                  TableName: table,
                  Key: keys.teamUploadSlots(teamId),
                  UpdateExpression: `REMOVE ${openSlots.map((_, i) => `slots.#u${i}`).join(', ')} SET version = if_not_exists(version, :zero) + :one`,
                  ConditionExpression: 'attribute_exists(slots)',
                  ExpressionAttributeNames: Object.fromEntries(openSlots.map((id, i) => [`#u${i}`, id])),
                  ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
                },
              },
            ]
          : []),
      ],
    }),
  );
  try {
    await finalWrite;
  } catch (error) {
    // The project item is gone: a concurrent run removed it, its holds and its place in the count.
    if (isTransactionCanceled(error) && conditionFailedAt(error, 0) && !(await projectExists(projectId))) return false;
    throw error;
  }
  await cancelProvisionalExpiry(projectId).catch(() => undefined);
  return true;
}

async function projectExists(projectId: string): Promise<boolean> {
  const out = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.project(projectId), ConsistentRead: true }));
  return out.Item !== undefined;
}

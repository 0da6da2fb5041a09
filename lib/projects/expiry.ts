import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { deletePrefix } from '../deployments/publish.ts';
import { cancelProvisionalExpiry } from './provisional.ts';
import { batchWriteAll } from '../db/batch.ts';
import { queryAll } from '../db/query.ts';
import { forgetHeldBlobs, heldBlobs } from '../uploads/blobs.ts';
import { readManifest } from '../uploads/stored-manifest.ts';
import type { UploadSessionRecord } from '../uploads/sessions.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';

export type ExpiryOutcome = 'deleted' | 'kept' | 'gone';

const deleteItems = (itemKeys: { pk: string; sk: string }[]) => batchWriteAll(itemKeys.map((Key) => ({ DeleteRequest: { Key } })));

/**
 * The provisional-expiry worker's job: deletes a provisional project whose
 * time is up and which never published, with its sessions, deployments,
 * objects, subdomain hold and name hold.
 *
 * The project is first claimed by one conditional write (status 'deleting',
 * only while provisional_until has passed and nothing is live); finalize's own
 * write requires status 'active'. So a publish racing the expiry either lands
 * first (and the claim fails: nothing is deleted) or finds the project gone.
 */
export async function expireProvisionalProject(projectId: string, now = new Date()): Promise<ExpiryOutcome> {
  const table = config.tableName();
  const project = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(projectId), ConsistentRead: true }))).Item;
  if (!project) return 'gone';
  if (project.status === 'active') {
    try {
      await dynamo().send(
        new UpdateCommand({
          TableName: table,
          Key: keys.project(projectId),
          UpdateExpression: 'SET #status = :deleting, updated_at = :now',
          ConditionExpression:
            '#status = :active AND attribute_exists(provisional_until) AND provisional_until <= :now AND ' +
            '(attribute_not_exists(live_deployment_id) OR live_deployment_id = :null)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':deleting': 'deleting', ':active': 'active', ':now': now.toISOString(), ':null': null },
        }),
      );
    } catch (error) {
      if (isConditionalCheckFailure(error)) return 'kept';
      throw error;
    }
  } else if (project.status !== 'deleting' || !project.provisional_until) {
    return 'kept';
  }
  // From here the project is ours to delete; a retry after a crash resumes at this point.
  const teamId = project.team_id as string;
  const sessions = await queryAll({
    TableName: table,
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.uploadSessionByProject(projectId, '', '').gsi1pk },
  });
  // What the sessions' uploads stored is deleted below: the team's records of those blobs must not
  // keep pointing there, or its next upload of the same files would be told they are held.
  const uploadedHashes = new Set<string>();
  for (const session of sessions) {
    const manifest = await readManifest(session as unknown as UploadSessionRecord).catch(() => null);
    for (const hash of manifest?.placements.keys() ?? []) uploadedHashes.add(hash);
  }
  const projectFolder = `${teamId}/${project.slug as string}/`;
  const pointingHere = [...(await heldBlobs(teamId, [...uploadedHashes])).values()].filter(
    (blob) => blob.project_id === projectId && blob.object_key.startsWith(projectFolder),
  );
  await forgetHeldBlobs(teamId, pointingHere);
  for (const session of sessions) {
    await deleteItems([keys.uploadSession(session.upload_id as string)]);
    await s3()
      .send(new DeleteObjectCommand({ Bucket: config.bucket('bundles'), Key: session.manifest_key as string }))
      .catch(() => undefined);
  }
  const deployments = await queryAll({
    TableName: table,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :deployment)',
    ExpressionAttributeValues: { ':pk': keys.project(projectId).pk, ':deployment': 'DEPLOYMENT#' },
    ProjectionExpression: 'pk, sk',
  });
  await deleteItems(deployments.map((d) => ({ pk: d.pk as string, sk: d.sk as string })));
  // Nothing was published, but uploads stored their files, and a finalize that lost the race may have copied some.
  await deletePrefix(config.bucket('sites'), `${teamId}/${project.slug as string}/`);

  const heldBy = { ':project': projectId };
  const openSlots = sessions.map((s) => s.upload_id as string);
  await dynamo().send(
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
  await cancelProvisionalExpiry(projectId).catch(() => undefined);
  return 'deleted';
}

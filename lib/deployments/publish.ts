import { CopyObjectCommand, DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../http/errors.ts';
import { productionUrl } from '../projects/projects.ts';
import { cancelProvisionalExpiry } from '../projects/provisional.ts';
import { blobKey } from '../uploads/blobs.ts';
import { readManifest, requireOpenSession } from '../uploads/files.ts';
import { getUploadSession, sessionFiles, type UploadSessionRecord } from '../uploads/sessions.ts';
import type { RouteManifest, RouteManifestFile } from '../sites/serve.ts';
import { contentTypeFor } from './content-type.ts';
import { deploymentPrefix, routeManifestKey } from '../sites/storage-keys.ts';
import { isConditionalCheckFailure, isTransactionCanceled } from '../db/errors.ts';

/** Server-side copies in flight at once while publishing. */
const COPY_CONCURRENCY = 48;
/** Files copied between two saved checkpoints. */
const COPY_CHUNK = 500;

/**
 * How long one finalize call copies before it answers "still publishing": API
 * Gateway cuts a request at 30 s, and a large deployment (or a slow endpoint)
 * may need more; the next call resumes at the saved checkpoint.
 */
function publishBudgetMs(): number {
  const value = Number(process.env.FINALIZE_BUDGET_MS);
  return Number.isFinite(value) && value > 0 ? value : 20_000;
}

export interface FinalizeResult {
  upload_id: string;
  deployment_id: string;
  project_id: string;
  status: 'ready';
  url: string;
  file_count: number;
  total_bytes: number;
  ready_at: string;
}

async function finalizedResult(session: UploadSessionRecord): Promise<FinalizeResult> {
  const [project, deployment] = await Promise.all([
    dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.project(session.project_id) })),
    dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.deployment(session.project_id, session.deployment_id) })),
  ]);
  if (!project.Item || !deployment.Item) throw new ApiError('UPLOAD_NOT_FOUND');
  return {
    upload_id: session.upload_id,
    deployment_id: session.deployment_id,
    project_id: session.project_id,
    status: 'ready',
    url: productionUrl(project.Item.subdomain as string),
    file_count: deployment.Item.file_count as number,
    total_bytes: deployment.Item.total_bytes as number,
    ready_at: deployment.Item.ready_at as string,
  };
}

/**
 * hash -> `{deployment_id}/{path}` of every object the deployment to reuse serves (its own files
 * and those it references in turn, so references never chain). That deployment is fixed on the
 * session by the first finalize attempt, so every retry copies the same files and resumes
 * its checkpoint in the same list, even if production moved meanwhile.
 */
async function reusableObjects(
  session: UploadSessionRecord,
  teamId: string,
  slug: string,
  liveDeploymentId: string | null | undefined,
): Promise<Map<string, string>> {
  const fixed = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.uploadSession(session.upload_id),
      UpdateExpression: 'SET reuse_from = if_not_exists(reuse_from, :live)',
      // Never re-create a session the expiry removed meanwhile.
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':live': liveDeploymentId && liveDeploymentId !== session.deployment_id ? liveDeploymentId : '' },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const source = fixed.Attributes?.reuse_from as string | undefined;
  const objects = new Map<string, string>();
  if (!source) return objects;
  const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('sites'), Key: routeManifestKey(teamId, slug, source) }));
  const manifest = JSON.parse(await reply.Body!.transformToString()) as RouteManifest;
  if (manifest.project_slug !== slug || manifest.team_id !== teamId) return objects;
  for (const [path, file] of Object.entries(manifest.files)) {
    if (!objects.has(file.hash)) objects.set(file.hash, file.object ?? `${source}/${path}`);
  }
  return objects;
}

async function deletePrefix(bucket: string, prefix: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await s3().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    const objects = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (objects.length > 0) await s3().send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/**
 * POST /api/v1/uploads/{upload_id}/finalize: once every missing file arrived,
 * copies each manifest file from the team's blob store to
 * `{team_id}/{slug}/{deployment_id}/{path}` with its content type, writes the
 * route manifest once, then in one transaction marks the deployment ready,
 * points production at it, clears provisional_until and closes the session.
 * A repeated (or concurrent) finalize answers with the same deployment.
 */
export async function finalizeUpload(sessionIn: UploadSessionRecord): Promise<FinalizeResult> {
  if (sessionIn.status === 'finalized') return finalizedResult(sessionIn);
  requireOpenSession(sessionIn);
  const session = sessionIn;
  const { stillMissing } = await sessionFiles(session.upload_id);
  if (stillMissing.length > 0) {
    throw new ApiError('UPLOAD_INCOMPLETE', { details: { missing: stillMissing, missing_count: stillMissing.length } });
  }

  const table = config.tableName();
  const projectItem = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(session.project_id), ConsistentRead: true }))).Item;
  if (!projectItem || projectItem.status !== 'active') throw new ApiError('PROJECT_EXPIRED');
  const deploymentItem = (
    await dynamo().send(new GetCommand({ TableName: table, Key: keys.deployment(session.project_id, session.deployment_id), ConsistentRead: true }))
  ).Item;
  if (!deploymentItem) throw new ApiError('UPLOAD_NOT_FOUND');
  const slug = projectItem.slug as string;
  const teamId = session.team_id;
  const files = await readManifest(session);
  const sites = config.bucket('sites');
  const bundles = config.bucket('bundles');
  const prefix = deploymentPrefix(teamId, slug, session.deployment_id);

  // A file whose bytes the live deployment already serves is not copied again: the route manifest
  // points at that object, in an earlier deployment folder of this project (lib/sites/serve.ts), so a
  // redeploy that changed one file copies one file.
  const reusable = await reusableObjects(session, teamId, slug, projectItem.live_deployment_id as string | null | undefined);
  const routeFiles: Record<string, RouteManifestFile> = {};
  for (const file of files) {
    const object = reusable.get(file.hash);
    routeFiles[file.path] = { hash: file.hash, size: file.size, content_type: contentTypeFor(file.path), ...(object ? { object } : {}) };
  }
  const toCopy = files.filter((file) => !routeFiles[file.path]!.object);

  // Copies go in manifest order, a chunk at a time, each chunk's end saved on the session.
  const started = Date.now();
  const limit = pLimit(COPY_CONCURRENCY);
  let copied = Math.min((session as { published_count?: number }).published_count ?? 0, toCopy.length);
  while (copied < toCopy.length) {
    if (copied > 0 && Date.now() - started > publishBudgetMs()) {
      throw new ApiError('PUBLISH_IN_PROGRESS', {
        details: { published_count: copied, file_count: toCopy.length },
        headers: { 'retry-after': '1' },
      });
    }
    const chunk = toCopy.slice(copied, copied + COPY_CHUNK);
    await Promise.all(
      chunk.map((file) =>
        limit(() =>
          s3().send(
            new CopyObjectCommand({
              Bucket: sites,
              Key: `${prefix}${file.path}`,
              CopySource: `${bundles}/${blobKey(teamId, file.hash)}`,
              ContentType: routeFiles[file.path]!.content_type,
              MetadataDirective: 'REPLACE',
            }),
          ),
        ),
      ),
    );
    copied += chunk.length;
    await dynamo().send(
      new UpdateCommand({
        TableName: table,
        Key: keys.uploadSession(session.upload_id),
        UpdateExpression: 'SET published_count = :n',
        ConditionExpression: '#status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':n': copied, ':open': 'open' },
      }),
    ).catch((error: unknown) => {
      // A racing finalize closed the session first; the transaction below sorts it out.
      if (!isConditionalCheckFailure(error)) throw error;
    });
  }

  const routeManifest = {
    project_slug: slug,
    project_id: session.project_id,
    team_id: teamId,
    deployment_id: session.deployment_id,
    created_at: deploymentItem.created_at,
    files: routeFiles,
  };
  try {
    await s3().send(
      new PutObjectCommand({
        Bucket: sites,
        Key: routeManifestKey(teamId, slug, session.deployment_id),
        Body: JSON.stringify(routeManifest),
        ContentType: 'application/json',
        // Written once: a racing finalize of the same session finds it there, with the same content.
        IfNoneMatch: '*',
      }),
    );
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if ((error as Error).name !== 'PreconditionFailed' && status !== 412) throw error;
  }

  const readyAt = new Date().toISOString();
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: keys.uploadSession(session.upload_id),
              UpdateExpression: 'SET #status = :finalized, finalized_at = :now',
              ConditionExpression: '#status = :open',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':finalized': 'finalized', ':open': 'open', ':now': readyAt },
            },
          },
          {
            Update: {
              TableName: table,
              Key: keys.deployment(session.project_id, session.deployment_id),
              UpdateExpression: 'SET #status = :ready, ready_at = :now',
              ConditionExpression: '#status = :uploading',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':ready': 'ready', ':uploading': 'uploading', ':now': readyAt },
            },
          },
          {
            // The expiry worker claims a project by setting status 'deleting' only while nothing
            // is live; this condition makes publish and expiry exclusive, whichever comes first wins.
            Update: {
              TableName: table,
              Key: keys.project(session.project_id),
              UpdateExpression: 'SET live_deployment_id = :deployment, updated_at = :now REMOVE provisional_until',
              ConditionExpression: '#status = :active',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':deployment': session.deployment_id, ':now': readyAt, ':active': 'active' },
            },
          },
          {
            Update: {
              TableName: table,
              Key: keys.teamUploadSlots(teamId),
              UpdateExpression: 'REMOVE slots.#upload SET version = if_not_exists(version, :zero) + :one',
              ExpressionAttributeNames: { '#upload': session.upload_id },
              ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
            },
          },
        ],
      }),
    );
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    const current = await getUploadSession(session.upload_id);
    if (current?.status === 'finalized') return finalizedResult(current);
    const project = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(session.project_id), ConsistentRead: true }))).Item;
    if (!project || project.status !== 'active') {
      // The expiry won: the copies made above belong to nothing.
      await deletePrefix(sites, prefix).catch(() => undefined);
      throw new ApiError('PROJECT_EXPIRED');
    }
    throw error;
  }
  if (projectItem.provisional_until) await cancelProvisionalExpiry(session.project_id).catch(() => undefined);
  return finalizedResult({ ...session, status: 'finalized' });
}

export { deletePrefix };

import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { getObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { batchGetAll, batchWriteAll } from '../db/batch.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import type { RouteManifest } from '../sites/serve.ts';
import { routeManifestKey } from '../sites/storage-keys.ts';

/**
 * What the team holds: a record per (team, hash) naming an object in the
 * SITES bucket that carries those bytes, so a later upload of the same
 * content is not asked for it again (`missing` narrows to what the team lacks)
 * and its finalize copies or references that object instead. There is no
 * separate blob store: uploaded bytes go straight into their deployment folder.
 */
export interface HeldBlob {
  hash: string;
  /** SITES key of an object with these bytes: `{team_id}/{slug}/{deployment_id}/{path}`. */
  object_key: string;
  /** The project whose folder holds that object. */
  project_id: string;
}

/**
 * hash -> `{deployment_id}/{path}` of every object the live deployment serves
 * (its own files and those it references in turn, so references never chain).
 */
export async function liveObjects(teamId: string, slug: string, liveDeploymentId: string | null | undefined): Promise<Map<string, string>> {
  const objects = new Map<string, string>();
  if (!liveDeploymentId) return objects;
  const reply = await getObject(config.bucket('sites'), routeManifestKey(teamId, slug, liveDeploymentId));
  const manifest = JSON.parse(await reply.transformToString()) as RouteManifest;
  if (manifest.project_slug !== slug || manifest.team_id !== teamId) return objects;
  for (const [path, file] of Object.entries(manifest.files)) {
    if (!objects.has(file.hash)) objects.set(file.hash, file.object ?? `${liveDeploymentId}/${path}`);
  }
  return objects;
}

/** The team's records for these hashes (absent when the team does not hold one). */
export async function heldBlobs(teamId: string, hashes: string[]): Promise<Map<string, HeldBlob>> {
  const held = new Map<string, HeldBlob>();
  const items = await batchGetAll(hashes.map((hash) => keys.heldBlob(teamId, hash)), 'blob_hash, object_key, project_id');
  for (const item of items) {
    // Records of the former blob store name no object: treated as not held.
    if (typeof item.object_key !== 'string') continue;
    held.set(item.blob_hash as string, { hash: item.blob_hash as string, object_key: item.object_key, project_id: item.project_id as string });
  }
  return held;
}

/** Records that the team holds these blobs at these objects (written as soon as an upload stored them). */
export async function recordHeldBlobs(teamId: string, blobs: (HeldBlob & { size: number })[]): Promise<void> {
  const storedAt = new Date().toISOString();
  await batchWriteAll(
    blobs.map((blob) => ({
      PutRequest: {
        Item: {
          ...keys.heldBlob(teamId, blob.hash),
          type: 'blob',
          team_id: teamId,
          blob_hash: blob.hash,
          size: blob.size,
          object_key: blob.object_key,
          project_id: blob.project_id,
          stored_at: storedAt,
        },
      },
    })),
  );
}

/**
 * Forgets records whose object is gone (its project was deleted), so the next
 * upload is asked for those bytes again. Conditional on the record still naming
 * that object: a publish that recorded a fresh location meanwhile is kept.
 */
export async function forgetHeldBlobs(teamId: string, stale: HeldBlob[]): Promise<void> {
  const limit = pLimit(8);
  await Promise.all(
    stale.map((blob) =>
      limit(() =>
        dynamo()
          .send(
            new DeleteCommand({
              TableName: config.tableName(),
              Key: keys.heldBlob(teamId, blob.hash),
              ConditionExpression: 'object_key = :stale',
              ExpressionAttributeValues: { ':stale': blob.object_key },
            }),
          )
          .catch((error: unknown) => {
            if (!isConditionalCheckFailure(error)) throw error;
          }),
      ),
    ),
  );
}

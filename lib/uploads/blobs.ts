import { BatchGetCommand, BatchWriteCommand, DeleteCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { dynamo } from '../aws/clients.ts';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import type { RouteManifest } from '../sites/serve.ts';
import { routeManifestKey } from '../sites/storage-keys.ts';

/**
 * What the team holds: a record per (team, hash) naming the published object
 * in the SITES bucket that carries those bytes, so a later upload of the same
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
  const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('sites'), Key: routeManifestKey(teamId, slug, liveDeploymentId) }));
  const manifest = JSON.parse(await reply.Body!.transformToString()) as RouteManifest;
  if (manifest.project_slug !== slug || manifest.team_id !== teamId) return objects;
  for (const [path, file] of Object.entries(manifest.files)) {
    if (!objects.has(file.hash)) objects.set(file.hash, file.object ?? `${liveDeploymentId}/${path}`);
  }
  return objects;
}

const BATCH_GET_MAX = 100;
const BATCH_WRITE_MAX = 25;

async function batchedInParallel<T>(items: T[], size: number, work: (batch: T[]) => Promise<void>): Promise<void> {
  const limit = pLimit(8);
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  await Promise.all(batches.map((batch) => limit(() => work(batch))));
}

const backoff = (attempt: number) => new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));

/** The team's records for these hashes (absent when the team does not hold one). */
export async function heldBlobs(teamId: string, hashes: string[]): Promise<Map<string, HeldBlob>> {
  const table = config.tableName();
  const held = new Map<string, HeldBlob>();
  await batchedInParallel(hashes, BATCH_GET_MAX, async (batch) => {
    let request: Record<string, { Keys: Record<string, unknown>[]; ProjectionExpression?: string }> | undefined = {
      [table]: { Keys: batch.map((hash) => keys.heldBlob(teamId, hash)), ProjectionExpression: 'blob_hash, object_key, project_id' },
    };
    for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
      if (attempt > 0) await backoff(attempt);
      const reply = await dynamo().send(new BatchGetCommand({ RequestItems: request }));
      for (const item of reply.Responses?.[table] ?? []) {
        // Records of the former blob store name no object: treated as not held.
        if (typeof item.object_key !== 'string') continue;
        held.set(item.blob_hash as string, { hash: item.blob_hash as string, object_key: item.object_key, project_id: item.project_id as string });
      }
      request = reply.UnprocessedKeys as typeof request;
    }
  });
  return held;
}

/** Records that the team holds these blobs at these objects (written as soon as an upload stored them). */
export async function recordHeldBlobs(teamId: string, blobs: (HeldBlob & { size: number })[]): Promise<void> {
  const table = config.tableName();
  const storedAt = new Date().toISOString();
  await batchedInParallel(blobs, BATCH_WRITE_MAX, async (batch) => {
    let request: Record<string, unknown[]> | undefined = {
      [table]: batch.map((blob) => ({
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
    };
    for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
      if (attempt > 0) await backoff(attempt);
      const reply = await dynamo().send(new BatchWriteCommand({ RequestItems: request as never }));
      request = reply.UnprocessedItems as typeof request;
    }
  });
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

import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { getObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { batchGetAll, batchWriteAll } from '../db/batch.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
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
 * The objects of the deployments this container saw last, by route manifest key. A route manifest is
 * written once and never changed (publish writes it with If-None-Match), so what it maps stays true:
 * a redeploy's begin and finalize both need the live deployment's, and the finalize before them wrote
 * it. Bounded by entries, not deployments: a 50,000-file deployment is a few megabytes of strings.
 */
const liveCache = new Map<string, ReadonlyMap<string, string>>();
const LIVE_CACHE_MAX_ENTRIES = 100_000;

function remember(key: string, objects: ReadonlyMap<string, string>): void {
  liveCache.delete(key);
  liveCache.set(key, objects);
  let entries = 0;
  for (const map of liveCache.values()) entries += map.size;
  for (const [oldest, map] of liveCache) {
    if (entries <= LIVE_CACHE_MAX_ENTRIES || oldest === key) break;
    liveCache.delete(oldest);
    entries -= map.size;
  }
}

/** hash -> `{deployment_id}/{path}` of each file of a route manifest (the first path that carries the hash). */
function objectsOf(deploymentId: string, files: RouteManifest['files']): Map<string, string> {
  const objects = new Map<string, string>();
  for (const [path, file] of Object.entries(files)) {
    if (!objects.has(file.hash)) objects.set(file.hash, file.object ?? `${deploymentId}/${path}`);
  }
  return objects;
}

/**
 * hash -> `{deployment_id}/{path}` of every object the live deployment serves
 * (its own files and those it references in turn, so references never chain).
 * Shared with later calls: not to be changed by the caller.
 */
export async function liveObjects(
  teamId: string,
  slug: string,
  liveDeploymentId: string | null | undefined,
): Promise<ReadonlyMap<string, string>> {
  if (!liveDeploymentId) return new Map();
  const key = routeManifestKey(teamId, slug, liveDeploymentId);
  const cached = liveCache.get(key);
  if (cached) return cached;
  const reply = await getObject(config.bucket('sites'), key);
  const manifest = JSON.parse(await reply.transformToString()) as RouteManifest;
  if (manifest.project_slug !== slug || manifest.team_id !== teamId) return new Map();
  const objects = objectsOf(liveDeploymentId, manifest.files);
  remember(key, objects);
  return objects;
}

/** What a publish just wrote as the route manifest of `deploymentId`: the next redeploy's live objects. */
export function rememberLiveObjects(manifest: Pick<RouteManifest, 'team_id' | 'project_slug' | 'deployment_id' | 'files'>): void {
  remember(
    routeManifestKey(manifest.team_id, manifest.project_slug, manifest.deployment_id),
    objectsOf(manifest.deployment_id, manifest.files),
  );
}

/** The team's records for these hashes (absent when the team does not hold one). */
export async function heldBlobs(teamId: string, hashes: string[]): Promise<Map<string, HeldBlob>> {
  const held = new Map<string, HeldBlob>();
  const items = await batchGetAll(
    hashes.map((hash) => keys.heldBlob(teamId, hash)),
    'pk, object_key, project_id',
  );
  for (const item of items) {
    // Records of the former blob store name no object: treated as not held.
    if (typeof item.object_key !== 'string') continue;
    const hash = hashOfHeldBlobKey(item.pk as string);
    held.set(hash, { hash, object_key: item.object_key, project_id: item.project_id as string });
  }
  return held;
}

/** The hash a record's key names (`BLOB#{team_id}#{hash}`): the key carries it, the record does not repeat it. */
function hashOfHeldBlobKey(pk: string): string {
  return pk.slice(pk.lastIndexOf('#') + 1);
}

/** The writes that record the team holds these blobs at these objects. */
export function heldBlobPuts(teamId: string, blobs: HeldBlob[]) {
  return blobs.map((blob) => ({
    PutRequest: {
      Item: { ...keys.heldBlob(teamId, blob.hash), type: 'blob', object_key: blob.object_key, project_id: blob.project_id } as Record<
        string,
        unknown
      >,
    },
  }));
}

/**
 * Records that the team holds these blobs at these objects (uploads write them with their session's
 * record of what it received: lib/uploads/received.ts). A record carries only what a lookup reads: its
 * key already names the team and the hash, and a first deploy writes one per file, so every attribute
 * more is paid thousands of times per deploy.
 */
export async function recordHeldBlobs(teamId: string, blobs: HeldBlob[]): Promise<void> {
  await batchWriteAll(heldBlobPuts(teamId, blobs));
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

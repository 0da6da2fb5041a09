import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { batchGetAll, batchWriteAll } from '../db/batch.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';

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

/** The team's records for these hashes (absent when the team does not hold one). */
export async function heldBlobs(teamId: string, hashes: string[]): Promise<Map<string, HeldBlob>> {
  const held = new Map<string, HeldBlob>();
  // Records of the former blob store name no object.
  const items = await batchGetAll<{ pk: string; object_key?: string; project_id: string }>(
    hashes.map((hash) => keys.heldBlob(teamId, hash)),
    'pk, object_key, project_id',
  );
  for (const item of items) {
    // Records of the former blob store name no object: treated as not held.
    if (typeof item.object_key !== 'string') continue;
    const hash = hashOfHeldBlobKey(item.pk);
    held.set(hash, { hash, object_key: item.object_key, project_id: item.project_id });
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
 * record of what it received: lib/publishing/received.ts). A record carries only what a lookup reads: its
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

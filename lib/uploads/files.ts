import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../http/errors.ts';
import { blobKey, heldBlobItem } from './blobs.ts';
import type { ManifestFile } from './manifest.ts';
import type { UploadSessionRecord } from './sessions.ts';

const HASH_PATTERN = /^[0-9a-f]{64}$/;

/** An open, unexpired session, or the refusal that says why not. */
export function requireOpenSession(session: UploadSessionRecord): void {
  if (session.status === 'finalized') throw new ApiError('UPLOAD_SESSION_FINALIZED', { details: { upload_id: session.upload_id } });
  if (Date.parse(session.expires_at) <= Date.now()) {
    throw new ApiError('UPLOAD_SESSION_EXPIRED', { details: { upload_id: session.upload_id, expires_at: session.expires_at } });
  }
}

export async function readManifest(session: Pick<UploadSessionRecord, 'manifest_key'>): Promise<ManifestFile[]> {
  const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: session.manifest_key }));
  return (JSON.parse(await reply.Body!.transformToString()) as { files: ManifestFile[] }).files;
}

/**
 * The session's item for a hash it expects (null when the hash is not among the missing). Keyed by the
 * path's ids alone, so the handler can read it while it reads the session.
 */
export async function expectedFile(uploadId: string, hash: string): Promise<Record<string, unknown> | null> {
  if (!HASH_PATTERN.test(hash)) return null;
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.uploadFile(uploadId, hash), ConsistentRead: true }),
  );
  return reply.Item ?? null;
}

/**
 * PUT /api/v1/uploads/{upload_id}/files/{hash}: stores one file's bytes in the
 * team's blob store after checking them against the hash and the manifest's
 * size. A mismatch stores nothing; repeating a PUT is harmless.
 */
export async function putUploadFile(
  session: UploadSessionRecord,
  hash: string,
  bytes: Buffer,
  expectedItem?: Promise<Record<string, unknown> | null>,
) {
  requireOpenSession(session);
  if (!HASH_PATTERN.test(hash)) throw new ApiError('UPLOAD_HASH_NOT_IN_MANIFEST', { details: { hash } });
  const expected = { Item: (await (expectedItem ?? expectedFile(session.upload_id, hash))) ?? undefined };
  let size = expected.Item?.size as number | undefined;
  if (size === undefined) {
    // Not among the missing: accepted only if the manifest names it (the team already held it at begin).
    const entry = (await readManifest(session)).find((f) => f.hash === hash);
    if (!entry) throw new ApiError('UPLOAD_HASH_NOT_IN_MANIFEST', { details: { hash } });
    size = entry.size;
  }
  const actualHash = createHash('sha256').update(bytes).digest('hex');
  if (actualHash !== hash || bytes.length !== size) {
    throw new ApiError('UPLOAD_CONTENT_MISMATCH', {
      details: { expected_hash: hash, actual_hash: actualHash, expected_size: size, actual_size: bytes.length },
    });
  }
  await s3().send(
    new PutObjectCommand({
      Bucket: config.bucket('bundles'),
      Key: blobKey(session.team_id, hash),
      Body: bytes,
      ContentLength: bytes.length,
    }),
  );
  // The team now holds the blob, and the session has received it: two puts in one call.
  const writes: Record<string, unknown>[] = [{ PutRequest: { Item: heldBlobItem(session.team_id, hash, size) } }];
  if (expected.Item) writes.push({ PutRequest: { Item: { ...expected.Item, received: true } } });
  let request: Record<string, unknown[]> | undefined = { [config.tableName()]: writes };
  while (request && Object.keys(request).length > 0) {
    const reply = await dynamo().send(new BatchWriteCommand({ RequestItems: request as never }));
    request = reply.UnprocessedItems as typeof request;
  }
  return { upload_id: session.upload_id, hash, size, received: true };
}

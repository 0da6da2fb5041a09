import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { copyObject, deleteObject, getObject, headObject, presignPut } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { contentTypeFor } from '../deployments/content-type.ts';
import { ApiError } from '../errors/api-error.ts';
import { UPLOAD_CONTENT_MISMATCH, UPLOAD_FILE_NOT_SENT } from '../errors/catalogue/sites.ts';
import { recordReceived } from './received.ts';
import { placementKey, requireOpenSession, type ReceivedFile } from './files.ts';
import { placementOf, readManifest, type Placement } from './stored-manifest.ts';
import type { UploadSessionRecord } from './sessions.ts';

/**
 * A file over MAX_INLINE_FILE_BYTES (lib/plans.ts) is sent straight to
 * storage with a presigned URL, then checked by the server (complete) before
 * it joins the deployment, exactly as a PUT would be.
 */
/** How long a presigned upload URL works (never past the session's end). */
const UPLOAD_URL_SECONDS = 3600;

/** BUNDLES key where a large file waits, unchecked, until complete moves it into the deployment. */
const stagingKey = (session: UploadSessionRecord, hash: string) => `uploads/${session.upload_id}/files/${hash}`;

async function placementFor(session: UploadSessionRecord, hash: string): Promise<Placement> {
  requireOpenSession(session);
  return placementOf(await readManifest(session), hash);
}

export interface LargeFileUploadUrl {
  upload_id: string;
  hash: string;
  size: number;
  method: 'PUT';
  url: string;
  /** Headers the PUT must carry as they are: they are part of the signature. */
  headers: Record<string, string>;
  expires_at: string;
}

/** POST /api/v1/uploads/{upload_id}/files/{hash}/upload-url */
export async function largeFileUploadUrl(session: UploadSessionRecord, hash: string): Promise<LargeFileUploadUrl> {
  const placement = await placementFor(session, hash);
  const untilSessionEnd = Math.floor((Date.parse(session.expires_at) - Date.now()) / 1000);
  const seconds = Math.max(1, Math.min(UPLOAD_URL_SECONDS, untilSessionEnd));
  const checksum = Buffer.from(hash, 'hex').toString('base64');
  // Length and SHA-256 signed as headers, not hoisted into the query: S3 then refuses bytes of another length or SHA-256.
  const url = await presignPut({
    bucket: config.bucket('bundles'),
    key: stagingKey(session, hash),
    contentLength: placement.size,
    checksumSha256: checksum,
    expiresIn: seconds,
  });
  return {
    upload_id: session.upload_id,
    hash,
    size: placement.size,
    method: 'PUT',
    url,
    headers: { 'content-length': String(placement.size), 'x-amz-checksum-sha256': checksum },
    expires_at: new Date(Date.now() + seconds * 1000).toISOString(),
  };
}

/**
 * POST /api/v1/uploads/{upload_id}/files/{hash}/complete: checks the bytes
 * sent to the upload URL against the hash and size (storage may not have:
 * the local endpoint does not), then stores them in the deployment folder like
 * a PUT. A mismatch discards them; repeating a complete is harmless.
 */
export async function completeLargeFile(session: UploadSessionRecord, hash: string): Promise<ReceivedFile> {
  const placement = await placementFor(session, hash);
  const bundles = config.bucket('bundles');
  const staged = stagingKey(session, hash);
  const target = placementKey(session, placement);
  let body: Readable;
  try {
    body = (await getObject(bundles, staged)).body;
  } catch (error) {
    if ((error as Error).name !== 'NoSuchKey') throw error;
    // Completed before (the staged copy is gone once stored), or never sent.
    const stored = await headObject(config.bucket('sites'), target).then(
      () => true,
      () => false,
    );
    if (stored) return { hash, size: placement.size };
    throw new ApiError(UPLOAD_FILE_NOT_SENT, { details: { hash } });
  }
  const digest = createHash('sha256');
  let size = 0;
  for await (const chunk of body) {
    digest.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  const actualHash = digest.digest('hex');
  if (actualHash !== hash || size !== placement.size) {
    await deleteObject(bundles, staged);
    throw new ApiError(UPLOAD_CONTENT_MISMATCH, {
      details: { expected_hash: hash, actual_hash: actualHash, expected_size: placement.size, actual_size: size },
    });
  }
  await copyObject({
    bucket: config.bucket('sites'),
    key: target,
    sourceBucket: bundles,
    sourceKey: staged,
    contentType: contentTypeFor(placement.path),
  });
  await recordReceived(session, [{ hash, object_key: target, project_id: session.project_id }]);
  await deleteObject(bundles, staged);
  return { hash, size };
}

import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { contentTypeFor } from '../deployments/content-type.ts';
import { ApiError } from '../errors/api-error.ts';
import { UPLOAD_CONTENT_MISMATCH, UPLOAD_SESSION_EXPIRED, UPLOAD_SESSION_FINALIZED } from '../errors/catalogue/sites.ts';
import { deployedObjectKey } from '../sites/storage-keys.ts';
import { recordReceived } from './received.ts';
import { placementOf, readManifest, type Placement } from './stored-manifest.ts';
import type { UploadSessionRecord } from './sessions.ts';

/** An open, unexpired session, or the refusal that says why not. */
export function requireOpenSession(session: UploadSessionRecord): void {
  if (session.status === 'finalized') throw new ApiError(UPLOAD_SESSION_FINALIZED, { details: { upload_id: session.upload_id } });
  if (Date.parse(session.expires_at) <= Date.now()) {
    throw new ApiError(UPLOAD_SESSION_EXPIRED, { details: { upload_id: session.upload_id, expires_at: session.expires_at } });
  }
}

/** The SITES key where a session stores the bytes of one content. */
export function placementKey(session: UploadSessionRecord, placement: Placement): string {
  return deployedObjectKey(session.team_id, session.project_slug, session.deployment_id, placement.path);
}

export interface UploadedFile {
  hash: string;
  bytes: Buffer;
}

export interface ReceivedFile {
  hash: string;
  size: number;
}

/** Uploaded files stored at once, within one request. */
const STORE_CONCURRENCY = 16;

/**
 * Checks uploaded files against the session's manifest (the hash must be in it,
 * the bytes must hash to it and have its size), then stores each in the
 * deployment folder at its placement and records that the team holds it and the session received it.
 * Every file is checked before any is stored, so a refused request stores
 * nothing; repeating one is harmless.
 */
export async function storeUploadedFiles(session: UploadSessionRecord, uploads: UploadedFile[]): Promise<ReceivedFile[]> {
  requireOpenSession(session);
  const manifest = await readManifest(session);
  const checked = uploads.map(({ hash, bytes }) => {
    const placement = placementOf(manifest, hash);
    const actualHash = createHash('sha256').update(bytes).digest('hex');
    if (actualHash !== hash || bytes.length !== placement.size) {
      throw new ApiError(UPLOAD_CONTENT_MISMATCH, {
        details: { expected_hash: hash, actual_hash: actualHash, expected_size: placement.size, actual_size: bytes.length },
      });
    }
    return { hash, bytes, placement };
  });
  const limit = pLimit(STORE_CONCURRENCY);
  const sites = config.bucket('sites');
  await Promise.all(
    checked.map(({ bytes, placement }) =>
      limit(() =>
        putObject({ bucket: sites, key: placementKey(session, placement), body: bytes, contentType: contentTypeFor(placement.path) }),
      ),
    ),
  );
  // The team now holds these bytes: a retry session (or another project) is not asked for them again,
  // and this session's finalize finds them received.
  await recordReceived(
    session,
    [...new Map(checked.map(({ hash, placement }) => [hash, placement])).entries()].map(([hash, placement]) => ({
      hash,
      object_key: placementKey(session, placement),
      project_id: session.project_id,
    })),
  );
  return checked.map(({ hash, placement }) => ({ hash, size: placement.size }));
}

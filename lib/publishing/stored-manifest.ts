import { getObject } from '../aws/s3-lite.ts';
import { config, perPlatform } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { UPLOAD_HASH_NOT_IN_MANIFEST } from '../errors/catalogue/sites.ts';
import type { ManifestFile } from './manifest.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';

/** The session's manifest as begin-upload stored it (BUNDLES `manifest_key`): written once, never changed. */
export interface StoredManifest {
  files: ManifestFile[];
  /** The hashes begin-upload asked the client to send. */
  missing: string[];
}

/**
 * Where each distinct content of a manifest is stored in its deployment folder:
 * at the first path that carries it, in manifest order. Uploads write there and
 * finalize looks there; other paths with the same content refer to that object.
 */
export interface Placement {
  path: string;
  size: number;
}

export interface ManifestIndex extends StoredManifest {
  placements: Map<string, Placement>;
}

/** Where the session stores a content; refused when the manifest does not name it (or it is no hash at all). */
export function placementOf(manifest: ManifestIndex, hash: string): Placement {
  const placement = manifest.placements.get(hash);
  if (!placement) throw new ApiError(UPLOAD_HASH_NOT_IN_MANIFEST, { details: { hash } });
  return placement;
}

export function placementsOf(files: ManifestFile[]): Map<string, Placement> {
  const placements = new Map<string, Placement>();
  for (const file of files) if (!placements.has(file.hash)) placements.set(file.hash, { path: file.path, size: file.size });
  return placements;
}

/**
 * Manifests read by this container, by upload id. A manifest never changes, so
 * the thousands of file uploads of one session read it once instead of once
 * each; a few sessions are kept, the oldest dropped first.
 */
const manifestCache = perPlatform(() => new Map<string, Promise<ManifestIndex>>());
const MANIFEST_CACHE_SIZE = 8;

export function readManifest(session: Pick<UploadSessionRecord, 'upload_id' | 'manifest_key'>): Promise<ManifestIndex> {
  const cached = manifestCache().get(session.upload_id);
  if (cached) return cached;
  const loading = (async () => {
    const reply = await getObject(config.bucket('bundles'), session.manifest_key);
    const stored = JSON.parse(await reply.transformToString()) as StoredManifest;
    return { files: stored.files, missing: stored.missing ?? [], placements: placementsOf(stored.files) };
  })();
  manifestCache().set(session.upload_id, loading);
  loading.catch(() => manifestCache().delete(session.upload_id));
  while (manifestCache().size > MANIFEST_CACHE_SIZE) manifestCache().delete(manifestCache().keys().next().value!);
  return loading;
}

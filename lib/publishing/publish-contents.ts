import pLimit from 'p-limit';
import { copyObject } from '../aws/s3-lite.ts';
import { listKeys } from '../aws/s3-prefixes.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { PUBLISH_IN_PROGRESS, UPLOAD_INCOMPLETE } from '../errors/catalogue/sites.ts';
import { forgetHeldBlobs, heldBlobs, type HeldBlob } from './blob-records.ts';
import { liveObjects } from './blobs.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';
import type { readManifest } from './stored-manifest.ts';
import { contentTypeFor } from '../deployments/content-type.ts';

/** Server-side copies in flight at once while publishing. */
const COPY_CONCURRENCY = 48;

/**
 * How long one finalize call copies before it answers "still publishing": API
 * Gateway cuts a request at 30 s, and a deployment reusing thousands of another
 * project's files (or a slow endpoint) may need more; the next call carries on
 * from what the deployment folder already holds.
 */
export const publishBudgetMs = () => config.finalizeBudgetMs();

type Manifest = Awaited<ReturnType<typeof readManifest>>;

/** What finalize places in the deployment folder: the session, its manifest, the folder, and what was received. */
export interface Placing {
  session: UploadSessionRecord;
  manifest: Manifest;
  slug: string;
  /** The deployment folder, `{team_id}/{slug}/{deployment_id}/`. */
  prefix: string;
  liveDeploymentId: string | null | undefined;
  /** The hashes the session's upload requests recorded as stored in the folder. */
  received: Set<string>;
}

/** The contents in place: those referenced where the project already has them, and how copying went. */
export interface Placed {
  references: Map<string, string>;
  copied: number;
  started: number;
  inPlace: () => number;
}

export const stillPublishing = (placed: Placed, manifest: Manifest) =>
  new ApiError(PUBLISH_IN_PROGRESS, {
    details: { published_count: placed.inPlace(), file_count: manifest.placements.size },
    headers: { 'retry-after': '1' },
  });

const incomplete = (missing: string[]) => new ApiError(UPLOAD_INCOMPLETE, { details: { missing, missing_count: missing.length } });

const isNoSuchKey = (error: unknown) =>
  (error as Error).name === 'NoSuchKey' || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

/**
 * Contents the team held at begin and nobody uploaded: referenced where this project already has
 * them (so a redeploy that changed one file stores one file), copied in from another project, or
 * lost (their project was deleted since).
 */
async function resolveHeld(p: Placing) {
  const asked = new Set(p.manifest.missing);
  const projectFolder = `${p.session.team_id}/${p.slug}/`;
  const elsewhere = [...p.manifest.placements.keys()].filter((hash) => !asked.has(hash));
  const references = new Map(elsewhere.length > 0 ? await liveObjects(p.session.team_id, p.slug, p.liveDeploymentId) : []);
  const unresolved = elsewhere.filter((hash) => !references.has(hash));
  const held = unresolved.length > 0 ? await heldBlobs(p.session.team_id, unresolved) : new Map<string, HeldBlob>();
  const toCopy: HeldBlob[] = [];
  const lost: string[] = [];
  for (const hash of unresolved) {
    const blob = held.get(hash);
    if (!blob) lost.push(hash);
    else if (blob.project_id === p.session.project_id && blob.object_key.startsWith(projectFolder))
      references.set(hash, blob.object_key.slice(projectFolder.length));
    else toCopy.push(blob);
  }
  return { references, toCopy, lost };
}

/**
 * What the record leaves open is settled by the folder itself: files it does not name, and the
 * copies an earlier call of this finalize made before it answered PUBLISH_IN_PROGRESS.
 */
async function settleByFolder(p: Placing, resolved: { toCopy: HeldBlob[]; lost: string[] }) {
  const unconfirmed = p.manifest.missing.filter((hash) => !p.received.has(hash));
  if (unconfirmed.length === 0 && resolved.toCopy.length === 0 && resolved.lost.length === 0) return resolved;
  const present = await listKeys(config.bucket('sites'), p.prefix);
  const inFolder = (hash: string) => present.has(`${p.prefix}${p.manifest.placements.get(hash)!.path}`);
  const notReceived = unconfirmed.filter((hash) => !inFolder(hash));
  if (notReceived.length > 0) throw incomplete(notReceived);
  return { toCopy: resolved.toCopy.filter((blob) => !inFolder(blob.hash)), lost: resolved.lost.filter((hash) => !inFolder(hash)) };
}

/** Copies held contents into the folder within the call's budget; those whose source is gone are returned. */
async function copyHeld(p: Placing, toCopy: HeldBlob[], placed: Placed): Promise<HeldBlob[]> {
  const sites = config.bucket('sites');
  const limit = pLimit(COPY_CONCURRENCY);
  const stale: HeldBlob[] = [];
  while (placed.copied < toCopy.length) {
    if (placed.copied > 0 && Date.now() - placed.started > publishBudgetMs()) throw stillPublishing(placed, p.manifest);
    const chunk = toCopy.slice(placed.copied, placed.copied + config.finalizeCopyChunk());
    await Promise.all(
      chunk.map((blob) =>
        limit(async () => {
          const placement = p.manifest.placements.get(blob.hash)!;
          try {
            await copyObject({
              bucket: sites,
              key: `${p.prefix}${placement.path}`,
              sourceBucket: sites,
              sourceKey: blob.object_key,
              contentType: contentTypeFor(placement.path),
            });
          } catch (error) {
            if (!isNoSuchKey(error)) throw error;
            stale.push(blob);
          }
        }),
      ),
    );
    placed.copied += chunk.length;
  }
  return stale;
}

/**
 * Every content of the manifest in place in the deployment folder, or the refusal that says why not:
 * UPLOAD_INCOMPLETE names what the client must still send, PUBLISH_IN_PROGRESS that copying goes on
 * in the next call.
 */
export async function placeContents(p: Placing): Promise<Placed> {
  const { references, ...held } = await resolveHeld(p);
  const { toCopy, lost } = await settleByFolder(p, held);
  const placed: Placed = { references, copied: 0, started: Date.now(), inPlace: () => 0 };
  placed.inPlace = () => p.manifest.placements.size - toCopy.length - lost.length + placed.copied;
  const stale = await copyHeld(p, toCopy, placed);
  if (stale.length > 0) await forgetHeldBlobs(p.session.team_id, stale);
  // Bytes the team held at begin but no longer does (their project was deleted): the client sends them.
  const resend = [...lost, ...stale.map((blob) => blob.hash)].sort();
  if (resend.length > 0) throw incomplete(resend);
  return placed;
}

import { getObject } from '../aws/s3-lite.ts';
import { config, perPlatform } from '../config.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
import { routeManifestKey } from '../sites/storage-keys.ts';

/**
 * The live deployment's objects, which a redeploy references instead of asking for them again
 * (what the team holds beyond them: blob-records.ts).
 *
 * The objects of the deployments this container saw last, by route manifest key. A route manifest is
 * written once and never changed (publish writes it with If-None-Match), so what it maps stays true:
 * a redeploy's begin and finalize both need the live deployment's, and the finalize before them wrote
 * it. Bounded by entries, not deployments: a 50,000-file deployment is a few megabytes of strings.
 */
const liveCache = perPlatform(() => new Map<string, ReadonlyMap<string, string>>());
const LIVE_CACHE_MAX_ENTRIES = 100_000;

function remember(key: string, objects: ReadonlyMap<string, string>): void {
  liveCache().delete(key);
  liveCache().set(key, objects);
  let entries = 0;
  for (const map of liveCache().values()) entries += map.size;
  for (const [oldest, map] of liveCache()) {
    if (entries <= LIVE_CACHE_MAX_ENTRIES || oldest === key) break;
    liveCache().delete(oldest);
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
  const cached = liveCache().get(key);
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

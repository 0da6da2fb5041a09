import { getObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
import { routeManifestKey } from '../sites/storage-keys.ts';
import { forgetHeldBlobs, heldBlobs } from './blob-records.ts';
import { discardSessions } from './sessions.ts';
import { readManifest } from './stored-manifest.ts';

type ProjectFolder = { id: string; teamId: string; slug: string };

/**
 * The team's records of blobs stored in the project's folder: they must not keep pointing there, or its
 * next upload of the same bytes would be told they are held.
 */
async function forgetBlobsStoredIn(project: ProjectFolder, sessions: UploadSessionRecord[], deploymentIds: string[]) {
  const { teamId, slug } = project;
  const projectFolder = `${teamId}/${slug}/`;
  const hashes = new Set<string>();
  for (const session of sessions) {
    const manifest = await readManifest(session).catch(() => null);
    for (const hash of manifest?.placements.keys() ?? []) hashes.add(hash);
  }
  for (const deploymentId of deploymentIds) {
    const text = await getObject(config.bucket('sites'), routeManifestKey(teamId, slug, deploymentId))
      .then((o) => o.transformToString())
      .catch(() => null);
    if (!text) continue;
    for (const file of Object.values((JSON.parse(text) as RouteManifest).files)) hashes.add(file.hash);
  }
  const pointingHere = [...(await heldBlobs(teamId, [...hashes])).values()].filter(
    (blob) => blob.project_id === project.id && blob.object_key.startsWith(projectFolder),
  );
  await forgetHeldBlobs(teamId, pointingHere);
}

/**
 * A deleted project's uploads (lib/lifecycle/project-deletion.ts): the team's records of blobs stored in its
 * folder, then its upload sessions and their manifests. Safe to run again.
 */
export async function purgeProjectUploads(project: ProjectFolder, sessions: UploadSessionRecord[], deploymentIds: string[]) {
  await forgetBlobsStoredIn(project, sessions, deploymentIds);
  await discardSessions(sessions);
}

import type { RouteManifest, RouteManifestFile } from './route-manifest.ts';

/**
 * Where a deployment's objects live in the sites bucket. The project slug is
 * the middle segment of every key, which is why it is immutable.
 */
export const deploymentPrefix = (teamId: string, slug: string, deploymentId: string) => `${teamId}/${slug}/${deploymentId}/`;

export const deployedObjectKey = (teamId: string, slug: string, deploymentId: string, path: string) =>
  `${deploymentPrefix(teamId, slug, deploymentId)}${path}`;

/** The write-once route manifest: a sibling of the deployment folder, so no user file can collide with it. */
export const routeManifestKey = (teamId: string, slug: string, deploymentId: string) =>
  `${teamId}/${slug}/${deploymentId}.route-manifest.json`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `{deployment_id}/{path}`: a UUID, then segments that are never empty, `.` or `..`: it cannot leave the project's folder. */
export function isObjectReference(reference: string): boolean {
  const [deploymentId, ...segments] = reference.split('/');
  return (
    UUID.test(deploymentId ?? '') &&
    segments.length > 0 &&
    segments.every((segment) => segment !== '' && segment !== '.' && segment !== '..' && !/[\\\0]/.test(segment))
  );
}

/** The sites-bucket key of a manifest file: its own deployment folder, or the earlier one it references. */
export function manifestObjectKey(manifest: RouteManifest, path: string, file: RouteManifestFile): string | null {
  if (file.object === undefined) return deployedObjectKey(manifest.team_id, manifest.project_slug, manifest.deployment_id, path);
  return isObjectReference(file.object) ? `${manifest.team_id}/${manifest.project_slug}/${file.object}` : null;
}

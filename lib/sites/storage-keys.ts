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

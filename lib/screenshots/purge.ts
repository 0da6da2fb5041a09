import { deletePrefix } from '../aws/s3-prefixes.ts';
import { config } from '../config.ts';

/** A deleted project's screenshots. */
export async function purgeProjectScreenshots(project: { id: string; teamId: string }) {
  await deletePrefix(config.bucket('bundles'), `screenshots/${project.teamId}/${project.id}/`);
}

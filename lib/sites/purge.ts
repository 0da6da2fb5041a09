import { deletePrefix } from '../aws/s3-prefixes.ts';
import { config } from '../config.ts';
import { deleteProjectAnalytics } from './analytics-records.ts';

/** A deleted project's site folder (every deployment's files and route manifest) and its analytics rows. */
export async function purgeProjectSite(project: { id: string; teamId: string; slug: string }) {
  await deletePrefix(config.bucket('sites'), `${project.teamId}/${project.slug}/`);
  await deleteProjectAnalytics(project.id);
}

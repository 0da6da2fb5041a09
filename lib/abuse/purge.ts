import { deletePrefix } from '../aws/s3-prefixes.ts';
import { config } from '../config.ts';
import { scanCachePrefix } from './scan-cache.ts';
import { forgetProjectScans } from './scan-records.ts';

/**
 * A deleted project's keyword scan cache, and its scans in the admin listing. The scan records stay, like the
 * abuse reports naming it.
 */
export async function purgeProjectScans(project: { id: string; teamId: string }) {
  await deletePrefix(config.bucket('bundles'), scanCachePrefix(project.teamId, project.id));
  await forgetProjectScans(project.id);
}

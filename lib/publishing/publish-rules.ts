import { getObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
import { compileServingRules, HEADERS_FILE, MAX_RULES_FILE_BYTES, REDIRECTS_FILE, type ServingRules } from '../sites/serving-rules.ts';
import { manifestObjectKey } from '../sites/storage-keys.ts';

/**
 * The publish step that compiles the deployment's `_redirects` and `_headers` (at its root: an upload's folder or
 * a build's output folder) into its route manifest, so that serving never parses them and a promote or rollback
 * moves them with the deployment. A deployment with neither file reads nothing and carries no rules.
 */
export async function compileDeploymentRules(
  manifest: Pick<RouteManifest, 'files' | 'team_id' | 'project_slug' | 'deployment_id'>,
): Promise<ServingRules | null> {
  const read = async (path: string): Promise<string | number | null> => {
    const file = manifest.files[path];
    if (!file) return null;
    if (file.size > MAX_RULES_FILE_BYTES) return file.size;
    const key = manifestObjectKey(manifest as RouteManifest, path, file);
    if (!key) return null;
    return (await getObject(config.bucket('sites'), key)).transformToString();
  };
  if (!manifest.files[REDIRECTS_FILE] && !manifest.files[HEADERS_FILE]) return null;
  const [redirects, headers] = await Promise.all([read(REDIRECTS_FILE), read(HEADERS_FILE)]);
  return compileServingRules({ redirects, headers });
}

import type { Readable } from 'node:stream';
import { GetObjectCommand, NoSuchKey } from '@aws-sdk/client-s3';
import { s3 } from '../aws/s3.ts';
import { config, perPlatform } from '../config.ts';
import type { RouteManifest } from './route-manifest.ts';
import { servingRulesMatcher, type ServingRulesMatcher } from './serving-rules.ts';
import { siteObjects } from './serving-cache.ts';
import type { SiteFiles } from './site-files.ts';
import { manifestObjectKey, routeManifestKey } from './storage-keys.ts';

/** A deployment's files as serving reads them: its route manifest and its objects, from the sites bucket. */

/** Write-once, so a deployment's manifest never changes: cache it for the container's life, bounded. */
const MANIFEST_CACHE_LIMIT = 500;
const manifestCache = perPlatform(() => new Map<string, RouteManifest>());

export async function routeManifest(teamId: string, slug: string, deploymentId: string): Promise<RouteManifest | null> {
  const cached = manifestCache().get(deploymentId);
  if (cached) return cached;
  let text: string;
  try {
    const out = await s3().send(
      new GetObjectCommand({ Bucket: config.bucket('sites'), Key: routeManifestKey(teamId, slug, deploymentId) }),
    );
    text = await out.Body!.transformToString('utf8');
  } catch (error) {
    if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
    throw error;
  }
  const manifest = JSON.parse(text) as RouteManifest;
  if (manifestCache().size >= MANIFEST_CACHE_LIMIT) manifestCache().delete(manifestCache().keys().next().value!);
  manifestCache().set(deploymentId, manifest);
  return manifest;
}

/** Per manifest and root: whether the deployment has a `{root}functions/` folder (a manifest never changes). */
const functionsFolderCache = new WeakMap<RouteManifest, Map<string, boolean>>();

function manifestHasFunctions(manifest: RouteManifest, root: string): boolean {
  let byRoot = functionsFolderCache.get(manifest);
  if (!byRoot) functionsFolderCache.set(manifest, (byRoot = new Map()));
  let has = byRoot.get(root);
  if (has === undefined) byRoot.set(root, (has = Object.keys(manifest.files).some((p) => p.startsWith(`${root}functions/`))));
  return has;
}

/** Per manifest: its rules' matcher, built on the first request that needs it (the rules were compiled at publish). */
const matcherCache = new WeakMap<RouteManifest, ServingRulesMatcher | null>();

function manifestRules(manifest: RouteManifest): ServingRulesMatcher | null {
  let matcher = matcherCache.get(manifest);
  if (matcher === undefined) {
    const rules = manifest.serving_rules;
    matcher = rules && (rules.redirects.length > 0 || rules.headers.length > 0) ? servingRulesMatcher(rules) : null;
    matcherCache.set(manifest, matcher);
  }
  return matcher;
}

/** A deployment's files: its route manifest, its objects (kept in memory by hash, lib/sites/serving-cache.ts). */
export function deploymentFiles(manifest: RouteManifest, root: string): SiteFiles {
  const has = (path: string) => Object.hasOwn(manifest.files, path);
  return {
    root,
    has,
    file: (path) => manifest.files[path]!,
    hasFunctions: () => manifestHasFunctions(manifest, root),
    rules: () => manifestRules(manifest),
    read: async (path, file) => {
      const cached = siteObjects.get(file.hash);
      if (cached) return cached;
      const key = manifestObjectKey(manifest, path, file);
      if (!key) throw new Error(`route manifest of ${manifest.deployment_id} names an object outside the project: ${path}`);
      const out = await s3().send(new GetObjectCommand({ Bucket: config.bucket('sites'), Key: key }));
      if (!siteObjects.fits(file.size)) return out.Body as Readable;
      const bytes = Buffer.from(await out.Body!.transformToByteArray());
      siteObjects.set(file.hash, bytes);
      return bytes;
    },
  };
}

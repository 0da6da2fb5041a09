import type { Readable } from 'node:stream';
import type { RouteManifestFile } from './route-manifest.ts';
import { etagMatches, resolveSitePath } from './site-paths.ts';
import { notFoundPage, type SiteReply, type SiteRequest } from './site-replies.ts';

/** Where a site's files come from is the caller's (lib/sites/deployment-files.ts, lib/local/dev-site.ts); how they are served is here. */

/**
 * Browsers and CDNs may keep a copy, but must ask again every time (with
 * If-None-Match) so that a new deployment or a rollback is seen at once;
 * the answer to that question is a cheap 304.
 */
const CACHE_CONTROL = 'public, max-age=0, must-revalidate';

/** Where a served file's bytes come from: a deployment's objects, or a folder on disk (`slipway dev`). */
export interface SiteFiles {
  /** The site root inside the files (`root_directory`), '' or `dir/`. */
  root: string;
  has(path: string): boolean;
  /** The file's facts; called for a path `has` accepted. */
  file(path: string): RouteManifestFile;
  /** Whether there is a `{root}functions/` folder (its node_modules/ is then not served either). */
  hasFunctions(): boolean;
  read(path: string, file: RouteManifestFile): Promise<Buffer | Readable>;
}

/**
 * Function sources (`{root}functions/**`) and, in a deployment that has them, the packages sent for them
 * (`{root}node_modules/**`) stay in the route manifest, so the next deployment can reuse their objects, but
 * are never served: they answer as a missing file. A site without functions still serves its node_modules/.
 */
function isFunctionsSource(path: string, root: string, hasFunctions: () => boolean): boolean {
  if (path.startsWith(`${root}functions/`)) return true;
  return path.startsWith(`${root}node_modules/`) && hasFunctions();
}

async function fileReply(status: 200 | 404, files: SiteFiles, path: string, request: SiteRequest, head: boolean): Promise<SiteReply> {
  const file = files.file(path);
  const etag = `"${file.hash}"`;
  const headers: Record<string, string> = {
    'content-type': file.content_type || 'application/octet-stream',
    'cache-control': status === 200 ? CACHE_CONTROL : 'no-store',
  };
  if (status === 200) {
    headers.etag = etag;
    if (etagMatches(request.headers['if-none-match'], etag)) return { status: 304, headers, body: null };
  }
  headers['content-length'] = String(file.size);
  if (head) return { status, headers, body: null };
  return { status, headers, body: await files.read(path, file) };
}

/**
 * The serving rules once the files are known, for a deployment and for a folder alike: the request path to a
 * file (resolveSitePath), function sources never served, the site's 404.html else the platform's page.
 */
export async function serveSiteFiles(request: SiteRequest, files: SiteFiles): Promise<SiteReply> {
  const head = request.method.toUpperCase() === 'HEAD';
  const found = resolveSitePath(request.path, (p) => files.has(p));
  const path = found && !isFunctionsSource(found, files.root, () => files.hasFunctions()) ? found : null;
  if (path) return fileReply(200, files, path, request, head);
  if (files.has('404.html')) return fileReply(404, files, '404.html', request, head);
  return notFoundPage(head);
}

import type { Readable } from 'node:stream';
import type { RouteManifestFile } from './route-manifest.ts';
import { RULES_FILES, redirectLocation, type RedirectMatch, type ServingRulesMatcher } from './serving-rules.ts';
import { etagMatches, requestSegments, resolveSitePath } from './site-paths.ts';
import { methodNotAllowed, notFoundPage, ruleRedirect, type SiteReply, type SiteRequest } from './site-replies.ts';

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
  /** The compiled `_redirects` and `_headers` (lib/sites/serving-rules.ts), or null without any. */
  rules(): ServingRulesMatcher | null;
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
    // A 304 answers a GET or HEAD only: a rewrite also serves its file to other methods (a posted form).
    if (isRead(request.method) && etagMatches(request.headers['if-none-match'], etag)) return { status: 304, headers, body: null };
  }
  headers['content-length'] = String(file.size);
  if (head) return { status, headers, body: null };
  return { status, headers, body: await files.read(path, file) };
}

const isRead = (method: string) => ['GET', 'HEAD'].includes(method.toUpperCase());

/** A path of the files that a request may be served: function sources and the two rules files never are. */
function servable(path: string | null, files: SiteFiles): path is string {
  return path !== null && !RULES_FILES.has(path) && !isFunctionsSource(path, files.root, () => files.hasFunctions());
}

/** A redirect rule's reply, or a rewrite's (200, 404): `to`'s file with the rule's status, else not found. */
async function ruleReply(match: RedirectMatch, request: SiteRequest, files: SiteFiles, head: boolean): Promise<SiteReply> {
  const { status } = match.rule;
  if (status !== 200 && status !== 404) {
    const query = request.path.indexOf('?');
    return ruleRedirect(status, redirectLocation(match.target, query === -1 ? '' : request.path.slice(query + 1)), CACHE_CONTROL, head);
  }
  // A rule has no method condition: a rewrite serves its file to every method, so a form posted to a client route
  // of a single-page app (`/* /index.html 200`) gets the app.
  const path = resolveSitePath(match.target, (p) => files.has(p));
  if (servable(path, files)) return fileReply(status, files, path, request, head);
  return notFound(files, request, head);
}

function notFound(files: SiteFiles, request: SiteRequest, head: boolean): Promise<SiteReply> | SiteReply {
  return files.has('404.html') ? fileReply(404, files, '404.html', request, head) : notFoundPage(head);
}

/**
 * The serving rules once the files are known, for a deployment and for a folder alike: the request path to a
 * file (resolveSitePath); then the first `_redirects` rule that matches (only a forced one when a file answers);
 * function sources and the rules files never served; the site's 404.html else the platform's page; and every
 * `_headers` block matching the request path on the reply. A rule answers every method (a redirect, or a rewrite's
 * file); a file without a rule only GET and HEAD.
 */
export async function serveSiteFiles(request: SiteRequest, files: SiteFiles): Promise<SiteReply> {
  const head = request.method.toUpperCase() === 'HEAD';
  const parsed = requestSegments(request.path);
  const found = parsed ? resolveSitePath(request.path, (p) => files.has(p)) : null;
  const rules = files.rules();
  let reply: SiteReply;
  if (found !== null && RULES_FILES.has(found)) {
    // Reported, never served: not even a rule may answer for them.
    reply = methodNotAllowed(request.method) ?? (await notFound(files, request, head));
  } else {
    const path = servable(found, files) ? found : null;
    const match = rules && parsed ? rules.redirect(parsed.segments, path !== null) : null;
    if (match) reply = await ruleReply(match, request, files, head);
    else
      reply =
        methodNotAllowed(request.method) ??
        (path ? await fileReply(200, files, path, request, head) : await notFound(files, request, head));
  }
  if (rules && parsed && reply.status !== 405) rules.applyHeaders(parsed.segments, reply.headers);
  return reply;
}

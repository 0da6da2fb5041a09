import type { Readable } from 'node:stream';
import { GetObjectCommand, NoSuchKey } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { logger } from '../logger.ts';
import type { RouteManifest, RouteManifestFile } from './route-manifest.ts';
import { manifestObjectKey, routeManifestKey } from './storage-keys.ts';
import { rootPrefix } from '../functions/build.ts';
import { siteAnalytics } from './analytics.ts';
import { customDomainHost, siteSubdomain } from './hostname.ts';
import { RecordCache, siteObjects } from './serving-cache.ts';
import { parsePreviewHost } from '../builds/preview-hosts.ts';
import { previewDeployment, projectIdForPreviewSlug } from '../builds/preview-records.ts';

/**
 * Serving sites: maps a request for `{subdomain}.{site_domain}` or for a
 * verified custom domain of a project to an object of the project's live
 * deployment. One module, used by the local platform's host handler and by
 * the serve-site Lambda behind CloudFront.
 *
 * Reads per request: the subdomain hold and the project (consistent reads, so
 * a promote or rollback is visible on the next request), then the route
 * manifest, which is write-once and therefore cached per deployment id. A
 * custom domain reads its hostname claim (cached briefly, below) and then the
 * domain and the project side by side: the same two round trips, or one.
 *
 * Before any file: a custom domain's geo rule (403 for a country it keeps out),
 * then the project's primary domain (301 to it from every other hostname when
 * `platform_url_mode` is `redirect`).
 */

export interface SiteRequest {
  /** The Host header as the client sent it (port allowed). */
  host: string;
  /** The request target: path and optional query string, still percent-encoded. */
  path: string;
  method: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string | undefined>;
}

export interface SiteReply {
  status: number;
  headers: Record<string, string>;
  /** null for HEAD, 304 and 405; a stream for deployed objects. */
  body: Buffer | Readable | null;
}

/** The serving error codes; they appear in the body and in `x-slipway-error`. */
export type ServeErrorCode = 'slug_mismatch' | 'route_manifest_missing' | 'internal_error';

/**
 * In the cloud the serve-site Lambda sits behind a function URL that needs its
 * own Host, so CloudFront copies the site host into this header.
 */
export const SITE_HOST_HEADER = 'x-slipway-host';

/**
 * Browsers and CDNs may keep a copy, but must ask again every time (with
 * If-None-Match) so that a new deployment or a rollback is seen at once;
 * the answer to that question is a cheap 304.
 */
const CACHE_CONTROL = 'public, max-age=0, must-revalidate';

/** A redirect to the primary domain: the spec's "301 cached at the edge for 30 days". */
export const PRIMARY_REDIRECT_CACHE_CONTROL = 'public, max-age=2592000';

const GEO_BLOCKED_PAGE = Buffer.from(
  '<!doctype html>\n<html><head><meta charset="utf-8"><title>403 Forbidden</title></head>' +
    '<body><h1>403 Forbidden</h1><p>This site is not available in your country or region.</p></body></html>\n',
);

const NOT_FOUND_PAGE = Buffer.from(
  '<!doctype html>\n<html><head><meta charset="utf-8"><title>404 Not Found</title></head>' +
    '<body><h1>404 Not Found</h1><p>There is nothing at this address.</p></body></html>\n',
);

// --- host -----------------------------------------------------------------------------------

export { customDomainHost, siteSubdomain };

// --- path rules -----------------------------------------------------------------------------

/**
 * The request path as a manifest path prefix: dot segments resolved the way a
 * URL parser resolves them (`..` never climbs above the root), each segment
 * percent-decoded. Null when a decoded segment hides a separator, a NUL or a
 * dot segment (`%2e%2e`, `..%2f`): such a path names nothing in a deployment.
 * Lookups are only ever made for paths present in the manifest, so nothing
 * outside the deployment folder is reachable whatever this returns.
 */
export function requestSegments(target: string): { segments: string[]; trailingSlash: boolean } | null {
  let pathname: string;
  try {
    pathname = new URL(target.startsWith('/') ? target : `/${target}`, 'http://site.invalid').pathname;
  } catch {
    return null;
  }
  const raw = pathname.split('/').slice(1);
  const trailingSlash = raw.length === 0 || raw[raw.length - 1] === '';
  const segments: string[] = [];
  for (const part of raw) {
    if (part === '') continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return null;
    }
    if (decoded === '.' || decoded === '..' || /[/\\\0]/.test(decoded)) return null;
    segments.push(decoded);
  }
  return { segments, trailingSlash };
}

/**
 * The manifest path a request path is served from, or null for "not found":
 * `/` and `/dir/` serve the folder's index.html; a path whose last segment has
 * no extension serves the file itself if deployed under that name, else
 * `path.html`, else `path/index.html`; any other path serves exactly itself.
 */
export function resolveSitePath(target: string, files: Record<string, unknown> | ((path: string) => boolean)): string | null {
  const parsed = requestSegments(target);
  if (!parsed) return null;
  const { segments, trailingSlash } = parsed;
  const has = typeof files === 'function' ? files : (p: string) => Object.hasOwn(files, p);
  const joined = segments.join('/');
  if (trailingSlash) {
    const index = joined ? `${joined}/index.html` : 'index.html';
    return has(index) ? index : null;
  }
  if (has(joined)) return joined;
  const last = segments[segments.length - 1]!;
  if (!last.includes('.')) {
    if (has(`${joined}.html`)) return `${joined}.html`;
    if (has(`${joined}/index.html`)) return `${joined}/index.html`;
  }
  return null;
}

/** If-None-Match against one strong ETag: `*`, a list, weak forms compared weakly (RFC 9110 13.1.2). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const value = ifNoneMatch.trim();
  if (value === '*') return true;
  return value.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

// --- data -----------------------------------------------------------------------------------

interface ProjectRecord {
  id: string;
  team_id: string;
  slug: string;
  subdomain: string;
  status?: string;
  live_deployment_id?: string | null;
  root_directory?: string | null;
  analytics_enabled?: boolean;
  primary_domain_id?: string | null;
  /** Internal copy of the primary domain's hostname, written and cleared with primary_domain_id. */
  primary_domain_hostname?: string | null;
  platform_url_mode?: string | null;
}

/** What serving needs of a custom domain item. */
interface ServedDomain {
  id: string;
  project_id: string;
  domain: string;
  status: string;
  deleted_at?: string | null;
  geo_mode?: 'off' | 'allowlist' | 'blocklist';
  geo_countries?: string[];
}

const records = new RecordCache<unknown>();

async function getItem<T>(key: { pk: string; sk: string }): Promise<T | null> {
  return (await records.get(`${key.pk}\n${key.sk}`, async () => {
    const out = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: key, ConsistentRead: true }));
    return (out.Item as T | undefined) ?? null;
  })) as T | null;
}

/**
 * Which project each subdomain's hold named when last read, per process. Only the project item is read
 * on each request (consistently, for promote and rollback); the hold again only when that project no
 * longer answers to the subdomain (it moved, or is gone), which is when a hold can name another project.
 */
const HOLD_CACHE_LIMIT = 1000;
const holdCache = new Map<string, string>();

/** The project holding a subdomain (via its hold item), or null. */
async function projectForSubdomain(subdomain: string): Promise<ProjectRecord | null> {
  const remembered = holdCache.get(subdomain);
  if (remembered) {
    const project = await getItem<ProjectRecord>(keys.project(remembered));
    // A project being deleted may have released its hold to another: read the hold again.
    if (project && project.subdomain === subdomain && project.status !== 'deleting') return project;
    holdCache.delete(subdomain);
  }
  const hold = await getItem<{ project_id?: string }>(keys.subdomainHold(subdomain));
  if (!hold?.project_id) return null;
  const project = await getItem<ProjectRecord>(keys.project(hold.project_id));
  // A hold whose project is gone, or that the project no longer answers to, serves nothing.
  if (!project || project.subdomain !== subdomain) return null;
  if (holdCache.size >= HOLD_CACHE_LIMIT) holdCache.delete(holdCache.keys().next().value!);
  holdCache.set(subdomain, project.id);
  return project;
}

/**
 * Hostname claims (`DOMAINHOST#{hostname}` -> domain id, project id), kept a
 * short while per process. A claim names one domain for that domain's whole
 * life, and the domain item is read on every request anyway, so a stale entry
 * (the domain removed, the hostname claimed again by another project) shows as
 * a removed or different domain and is read afresh at once. Hostnames without
 * a claim are not remembered: a new domain answers as soon as it is verified.
 */
const CLAIM_CACHE_TTL_MS = 60_000;
const CLAIM_CACHE_LIMIT = 1000;
const claimCache = new Map<string, { domainId: string; projectId: string; until: number }>();

async function domainClaim(hostname: string, fresh: boolean): Promise<{ domainId: string; projectId: string } | null> {
  const cached = claimCache.get(hostname);
  if (!fresh && cached && cached.until > Date.now()) return cached;
  claimCache.delete(hostname);
  const claim = await getItem<{ domain_id?: string; project_id?: string }>(keys.domainHost(hostname));
  if (!claim?.domain_id || !claim.project_id) return null;
  if (claimCache.size >= CLAIM_CACHE_LIMIT) claimCache.delete(claimCache.keys().next().value!);
  const entry = { domainId: claim.domain_id, projectId: claim.project_id, until: Date.now() + CLAIM_CACHE_TTL_MS };
  claimCache.set(hostname, entry);
  return entry;
}

/**
 * The project a custom domain serves, with the domain: only a verified domain
 * that is not removed and still belongs to the project. The domain and the
 * project are read together (consistent reads, as for subdomains).
 */
async function projectForCustomDomain(hostname: string): Promise<{ project: ProjectRecord; domain: ServedDomain } | null> {
  for (const fresh of [false, true]) {
    const claim = await domainClaim(hostname, fresh);
    if (!claim) return null;
    const [domain, project] = await Promise.all([
      getItem<ServedDomain>(keys.domain(claim.domainId)),
      getItem<ProjectRecord>(keys.project(claim.projectId)),
    ]);
    const current = domain && !domain.deleted_at && domain.domain === hostname && domain.project_id === claim.projectId;
    // A remembered claim whose domain is gone or changed hands: read the claim itself once more.
    if (!current && !fresh) continue;
    if (!current || !project || domain.status !== 'verified') return null;
    return { project, domain };
  }
  return null;
}

/**
 * Whether a custom domain's geo rule keeps this visitor out. The country comes
 * from a header that is configuration (GEO_COUNTRY_HEADER, CloudFront's
 * `CloudFront-Viewer-Country` by default). An allowlist lets in only the
 * countries it names, so a visitor whose country is not known is kept out; a
 * blocklist keeps out only the countries it names.
 */
export function geoBlocked(
  rule: Pick<ServedDomain, 'geo_mode' | 'geo_countries'>,
  headers: Record<string, string | undefined>,
  headerName = config.geoCountryHeader(),
): boolean {
  const mode = rule.geo_mode ?? 'off';
  if (mode !== 'allowlist' && mode !== 'blocklist') return false;
  const countries = new Set((rule.geo_countries ?? []).map((c) => c.toUpperCase()));
  const country = headers[headerName]?.trim().toUpperCase() || null;
  const listed = country !== null && countries.has(country);
  return mode === 'allowlist' ? !listed : listed;
}

/** The same path and query on the primary domain, on the platform's public scheme and port. */
function primaryLocation(primaryHost: string, target: string): string {
  let pathAndQuery = target;
  if (!pathAndQuery.startsWith('/')) {
    // An absolute-form request target (`http://host/path?q`): keep its path and query only.
    try {
      const url = new URL(pathAndQuery);
      pathAndQuery = `${url.pathname}${url.search}`;
    } catch {
      pathAndQuery = '/';
    }
  }
  return `${config.publicScheme()}://${primaryHost}${config.publicPortSuffix()}${pathAndQuery}`;
}

/** Write-once, so a deployment's manifest never changes: cache it for the container's life, bounded. */
const MANIFEST_CACHE_LIMIT = 500;
const manifestCache = new Map<string, RouteManifest>();

async function routeManifest(teamId: string, slug: string, deploymentId: string): Promise<RouteManifest | null> {
  const cached = manifestCache.get(deploymentId);
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
  if (manifestCache.size >= MANIFEST_CACHE_LIMIT) manifestCache.delete(manifestCache.keys().next().value!);
  manifestCache.set(deploymentId, manifest);
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

/**
 * Function sources (`{root}functions/**`) and, in a deployment that has them, the packages sent for them
 * (`{root}node_modules/**`) stay in the route manifest, so the next deployment can reuse their objects, but
 * are never served: they answer as a missing file. A site without functions still serves its node_modules/.
 */
function isFunctionsSource(path: string, root: string, hasFunctions: () => boolean): boolean {
  if (path.startsWith(`${root}functions/`)) return true;
  return path.startsWith(`${root}node_modules/`) && hasFunctions();
}

// --- replies --------------------------------------------------------------------------------

function plain(status: number, body: Buffer | string, extra: Record<string, string> = {}, head = false): SiteReply {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return {
    status,
    headers: {
      'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'text/html; charset=utf-8',
      'content-length': String(bytes.length),
      'cache-control': 'no-store',
      ...extra,
    },
    body: head ? null : bytes,
  };
}

function serveError(code: ServeErrorCode, head: boolean): SiteReply {
  return plain(500, `${code}\n`, { 'x-slipway-error': code }, head);
}

function notFoundPage(head: boolean): SiteReply {
  return plain(404, NOT_FOUND_PAGE, {}, head);
}

function geoBlockedPage(head: boolean): SiteReply {
  return plain(403, GEO_BLOCKED_PAGE, {}, head);
}

function primaryRedirect(location: string, head: boolean): SiteReply {
  return plain(301, `Moved Permanently: ${location}\n`, { location, 'cache-control': PRIMARY_REDIRECT_CACHE_CONTROL }, head);
}

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

/** A method the site server does not answer (it serves GET and HEAD). */
export function methodNotAllowed(method: string): SiteReply | null {
  const upper = method.toUpperCase();
  return upper === 'GET' || upper === 'HEAD' ? null : plain(405, 'Method Not Allowed\n', { allow: 'GET, HEAD' });
}

/** A deployment's files: its route manifest, its objects (kept in memory by hash, lib/sites/serving-cache.ts). */
function deploymentFiles(manifest: RouteManifest, root: string): SiteFiles {
  const has = (path: string) => Object.hasOwn(manifest.files, path);
  return {
    root,
    has,
    file: (path) => manifest.files[path]!,
    hasFunctions: () => manifestHasFunctions(manifest, root),
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

/** Answers one request for a site. Never throws: a platform fault is a plain 500. */
export async function serveSite(request: SiteRequest): Promise<SiteReply> {
  const served: { project: ProjectRecord | null } = { project: null };
  const reply = await answer(request, served);
  const project = served.project;
  if (project && project.analytics_enabled !== false) {
    siteAnalytics.record({
      projectId: project.id,
      teamId: project.team_id,
      path: request.path.split('?')[0]!,
      status: reply.status,
      bytes: reply.body ? Number(reply.headers['content-length'] ?? 0) : 0,
    });
  }
  return reply;
}

async function answer(request: SiteRequest, served: { project: ProjectRecord | null }): Promise<SiteReply> {
  const head = request.method.toUpperCase() === 'HEAD';
  const refused = methodNotAllowed(request.method);
  if (refused) return refused;
  try {
    const preview = parsePreviewHost(request.host);
    if (preview) return await answerPreview(request, preview, head);
    const subdomain = siteSubdomain(request.host);
    const customHost = subdomain ? null : customDomainHost(request.host);
    let project: ProjectRecord | null = null;
    let domain: ServedDomain | null = null;
    if (subdomain) {
      project = await projectForSubdomain(subdomain);
    } else if (customHost) {
      const found = await projectForCustomDomain(customHost);
      if (found) ({ project, domain } = found);
    }
    if (!project || project.status === 'deleting') return notFoundPage(head);
    // The rule is the domain's, as a distribution's geo restriction is: before anything else, redirects included.
    if (domain && !config.geoRulesAtEdge() && geoBlocked(domain, request.headers)) {
      served.project = project;
      return geoBlockedPage(head);
    }
    if (
      project.platform_url_mode === 'redirect' &&
      project.primary_domain_id &&
      project.primary_domain_hostname &&
      domain?.id !== project.primary_domain_id
    ) {
      served.project = project;
      return primaryRedirect(primaryLocation(project.primary_domain_hostname, request.path), head);
    }
    // A project that never published (a provisional one, say) has no site to count.
    if (!project.live_deployment_id) return notFoundPage(head);
    served.project = project;
    return await answerFromDeployment(request, project, project.live_deployment_id, head);
  } catch (error) {
    logger.error('serving a site failed', error as Error);
    return serveError('internal_error', head);
  }
}

/**
 * A preview host (`{label}-{preview_slug}.previews.{site_domain}`): the project holding the slug (and
 * still answering to it, so a changed slug stops serving the old hosts), then the deployment the label
 * names. Previews have no custom domains, redirects or analytics.
 */
async function answerPreview(request: SiteRequest, preview: { label: string; slug: string }, head: boolean): Promise<SiteReply> {
  const projectId = await projectIdForPreviewSlug(preview.slug);
  const project = projectId ? await getItem<ProjectRecord & { preview_slug?: string | null }>(keys.project(projectId)) : null;
  if (!project || project.status === 'deleting' || project.preview_slug !== preview.slug) return notFoundPage(head);
  const deploymentId = await previewDeployment(project.id, preview.label);
  if (!deploymentId) return notFoundPage(head);
  return answerFromDeployment(request, project, deploymentId, head);
}

/** The file a request names in one deployment of a project, or its 404. */
async function answerFromDeployment(request: SiteRequest, project: ProjectRecord, deploymentId: string, head: boolean): Promise<SiteReply> {
  const manifest = await routeManifest(project.team_id, project.slug, deploymentId);
  if (!manifest) {
    logger.error('deployment has no route manifest', { project_id: project.id, deployment_id: deploymentId });
    return serveError('route_manifest_missing', head);
  }
  // The slug is the storage key; a manifest naming another slug means the objects are elsewhere.
  if (manifest.project_slug !== project.slug) {
    logger.error('route manifest slug differs from the project slug', {
      project_id: project.id,
      deployment_id: deploymentId,
      manifest_slug: manifest.project_slug,
      project_slug: project.slug,
    });
    return serveError('slug_mismatch', head);
  }
  return await serveSiteFiles(request, deploymentFiles(manifest, rootPrefix(project.root_directory)));
}

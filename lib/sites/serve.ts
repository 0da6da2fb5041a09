import { config } from '../config.ts';
import { logger } from '../logger.ts';
import { rootPrefix } from './root-directory.ts';
import { siteAnalytics } from './analytics.ts';
import { deploymentFiles, routeManifest } from './deployment-files.ts';
import { customDomainHost, siteSubdomain } from './hostname.ts';
import { projectForCustomDomain, projectForSubdomain, servedProject, type ServedDomain, type ServedProject } from './serving-records.ts';
import { serveSiteFiles } from './site-files.ts';
import { geoBlockedPage, notFoundPage, primaryRedirect, serveError, type SiteReply, type SiteRequest } from './site-replies.ts';
import { parsePreviewHost } from './preview-hosts.ts';
import { previewDeployment, projectIdForPreviewSlug } from './preview-records.ts';

/**
 * Serving sites: maps a request for `{subdomain}.{site_domain}` or for a
 * verified custom domain of a project to an object of the project's live
 * deployment. One module, used by the local platform's host handler and by
 * the serve-site Lambda behind CloudFront.
 *
 * Reads per request: the subdomain hold and the project (consistent reads, so
 * a promote or rollback is visible on the next request), then the route
 * manifest, which is write-once and therefore cached per deployment id. A
 * custom domain reads its hostname claim (cached briefly: lib/sites/serving-records.ts) and then the
 * domain and the project side by side: the same two round trips, or one.
 *
 * Before any file: a custom domain's geo rule (403 for a country it keeps out),
 * then the project's primary domain (301 to it from every other hostname when
 * `platform_url_mode` is `redirect`).
 */

/**
 * In the cloud the serve-site Lambda sits behind a function URL that needs its
 * own Host, so CloudFront copies the site host into this header.
 */
export const SITE_HOST_HEADER = 'x-slipway-host';

/**
 * The origin header the sites distribution sends to the serve-site function URL that takes methods other than GET
 * and HEAD: that URL is public (origin access control would need a signed body), so it answers only a request that
 * carries the secret `siteOrigin` (infra/site-serving.ts).
 */
export const SITE_ORIGIN_HEADER = 'x-slipway-origin-secret';

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

/** Answers one request for a site. Never throws: a platform fault is a plain 500. */
export async function serveSite(request: SiteRequest): Promise<SiteReply> {
  const served: { project: ServedProject | null } = { project: null };
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

async function answer(request: SiteRequest, served: { project: ServedProject | null }): Promise<SiteReply> {
  const head = request.method.toUpperCase() === 'HEAD';
  // No method is refused here: a `_redirects` redirect answers every method, a file GET and HEAD (site-files.ts).
  try {
    const preview = parsePreviewHost(request.host);
    if (preview) return await answerPreview(request, preview, head);
    const subdomain = siteSubdomain(request.host);
    const customHost = subdomain ? null : customDomainHost(request.host);
    let project: ServedProject | null = null;
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
  const project = projectId ? await servedProject(projectId) : null;
  if (!project || project.status === 'deleting' || project.preview_slug !== preview.slug) return notFoundPage(head);
  const deploymentId = await previewDeployment(project.id, preview.label);
  if (!deploymentId) return notFoundPage(head);
  return answerFromDeployment(request, project, deploymentId, head);
}

/** The file a request names in one deployment of a project, or its 404. */
async function answerFromDeployment(request: SiteRequest, project: ServedProject, deploymentId: string, head: boolean): Promise<SiteReply> {
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

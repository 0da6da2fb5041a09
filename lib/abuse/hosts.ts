import { domainToASCII } from 'node:url';
import { getDomainItem, getHostnameClaim } from '../domains/records.ts';
import { functionHostnameLabel, resolveFunctionByHostname } from '../functions/resolve.ts';
import { getProjectItem, getSubdomainHold, type ProjectItem } from '../projects/records.ts';
import { siteSubdomain } from '../sites/hostname.ts';

/**
 * Whether a reported URL is on a hostname this platform serves (spec: "Must be
 * on hostnames the service serves; never fetched"). Only the table is read:
 * nothing is ever requested from the URL.
 */

/** What a reported URL points at. */
export interface HostedTarget {
  url: string;
  hostname: string;
  kind: 'site' | 'function' | 'custom_domain';
  project_id: string;
  team_id: string;
}

/** A project that still exists (any status: one being deleted was hosted when the report was written). */
async function projectOf(projectId: unknown): Promise<ProjectItem | null> {
  return typeof projectId === 'string' ? getProjectItem(projectId) : null;
}

/**
 * `{subdomain}.{site_domain}`: the same host rule site serving applies
 * (lib/sites/serve.ts `siteSubdomain`), then the subdomain's hold, whose
 * project must still answer to that subdomain.
 */
async function siteTarget(hostname: string): Promise<Omit<HostedTarget, 'url'> | null> {
  const subdomain = siteSubdomain(hostname);
  if (!subdomain) return null;
  const hold = await getSubdomainHold(subdomain);
  const project = await projectOf(hold?.project_id);
  if (!project || project.subdomain !== subdomain) return null;
  return { hostname, kind: 'site', project_id: project.id, team_id: project.team_id };
}

/** `{name}-{subdomain}.{function_domain}`: exactly what the HTTPS door answers (lib/functions/resolve.ts). */
async function functionTarget(hostname: string): Promise<Omit<HostedTarget, 'url'> | null> {
  if (!functionHostnameLabel(hostname)) return null;
  const fn = await resolveFunctionByHostname(hostname);
  return fn ? { hostname, kind: 'function', project_id: fn.project_id, team_id: fn.team_id } : null;
}

/**
 * A custom domain (lib/domains/): its platform-wide hostname claim, and the
 * domain verified and not removed. HOOK (custom-domain serving): the
 * distributions that will serve verified domains (the TLS part of custom
 * domains) are not built yet; when they are, a verified domain is still what
 * is served, so this condition stays, or becomes "has its distribution".
 */
async function customDomainTarget(hostname: string): Promise<Omit<HostedTarget, 'url'> | null> {
  const claim = await getHostnameClaim(hostname);
  if (typeof claim?.domain_id !== 'string') return null;
  const domain = await getDomainItem(claim.domain_id);
  if (!domain || domain.status !== 'verified' || (domain.deleted_at ?? null) !== null || domain.domain !== hostname) return null;
  return { hostname, kind: 'custom_domain', project_id: domain.project_id, team_id: domain.team_id };
}

/** The hostname of an http(s) URL as DNS and the table hold it (lower-case ASCII, no trailing dot), or null. */
export function reportedHostname(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  const ascii = domainToASCII(parsed.hostname.replace(/\.$/, ''));
  return ascii ? ascii.toLowerCase() : null;
}

/** The hosted site, function or verified custom domain a URL is on, or null when the platform does not serve its host. */
export async function resolveReportedUrl(url: string): Promise<HostedTarget | null> {
  const hostname = reportedHostname(url);
  if (!hostname) return null;
  // The function domain may sit under the site domain (fn.slipway.site): a function host is tried first.
  const target = (await functionTarget(hostname)) ?? (await siteTarget(hostname)) ?? (await customDomainTarget(hostname));
  return target ? { url, ...target } : null;
}

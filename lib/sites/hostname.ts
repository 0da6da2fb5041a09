import { config } from '../config.ts';

/*
 * Which site a host names, on its own so that code needing only the host rule
 * (abuse intake checks reported URLs) does not bundle site serving.
 */

/**
 * The subdomain of a site host: `{subdomain}.{site_domain}` with the port
 * ignored and exactly one label before the domain (so `x.fn.{site_domain}`
 * and deeper names are not sites). Null when the host is not a site host.
 */
export function siteSubdomain(host: string | undefined, siteDomain = config.siteDomain()): string | null {
  if (!host) return null;
  const name = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${siteDomain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return null;
  const label = name.slice(0, -suffix.length);
  // A DNS label: what a subdomain can be. Anything else cannot be held.
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label) ? label : null;
}

/**
 * A host that may be a project's custom domain, in the form the hostname claim
 * is keyed by (lower case, no port, no trailing dot), or null for hosts that
 * cannot be one: no dot (`localhost`, the local API), an IP address, a label
 * DNS would refuse, or anything under the platform's own site or function
 * domain. Only the claim item says whether it is a domain; this keeps the
 * table out of requests that could never match (locally, every API call).
 */
export function customDomainHost(
  host: string | undefined,
  siteDomain = config.siteDomain(),
  functionDomain = config.functionDomain(),
): string | null {
  if (!host) return null;
  const name = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  if (name.length > 253 || !name.includes('.')) return null;
  const labels = name.split('.');
  if (!labels.every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))) return null;
  // A dotted-quad IPv4 address ends in digits; no top-level domain does. (IPv6 literals fail the label rule.)
  if (/^\d+$/.test(labels[labels.length - 1]!)) return null;
  for (const own of [siteDomain.toLowerCase(), functionDomain.toLowerCase()]) {
    if (name === own || name.endsWith(`.${own}`)) return null;
  }
  return name;
}

/**
 * The custom hostname, set by a domain's own distribution on its origin
 * request to the sites distribution (lib/domains/tls.ts), whose viewer
 * function makes it the site host instead of the platform hostname the
 * request is addressed to (infra/site-serving.ts).
 */
export const CUSTOM_HOST_HEADER = 'x-slipway-custom-host';

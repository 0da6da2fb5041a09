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

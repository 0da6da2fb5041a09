// Entries of the error catalogue (lib/errors/catalogue.ts). Custom domains, their TLS and geo rules (docs/domains.md).

// Custom domains (docs/domains.md)
export const DOMAIN_NOT_FOUND = { code: 'DOMAIN_NOT_FOUND', status: 404, message: 'Domain not found.' } as const;
export const DOMAIN_INVALID = {
  code: 'DOMAIN_INVALID',
  status: 400,
  message:
    'A domain is a hostname under a public suffix, like www.example.com: letters, digits and hyphens in labels of at most 63 characters.',
} as const;
export const DOMAIN_RESERVED = {
  code: 'DOMAIN_RESERVED',
  status: 400,
  message: "Hostnames under the platform's own site and function domains cannot be added as custom domains.",
} as const;
export const DOMAIN_TAKEN = { code: 'DOMAIN_TAKEN', status: 409, message: 'This hostname is already connected to a project.' } as const;
export const DOMAIN_CHANGED = {
  code: 'DOMAIN_CHANGED',
  status: 409,
  message: 'The domain changed while this request ran. Read it again and retry.',
} as const;
// The project's primary domain (PATCH /api/v1/projects/{id}, primary_domain_id; docs/domains.md#serving)
export const PRIMARY_DOMAIN_NOT_IN_PROJECT = {
  code: 'PRIMARY_DOMAIN_NOT_IN_PROJECT',
  status: 400,
  message: 'primary_domain_id must be the id of a domain of this project.',
} as const;
export const PRIMARY_DOMAIN_NOT_VERIFIED = {
  code: 'PRIMARY_DOMAIN_NOT_VERIFIED',
  status: 409,
  message: 'Only a verified domain can be the primary domain. Verify it first.',
} as const;
export const PRIMARY_DOMAIN_REMOVED = {
  code: 'PRIMARY_DOMAIN_REMOVED',
  status: 409,
  message: 'This domain has been removed from the project, so it cannot be the primary domain.',
} as const;
export const DOMAIN_NOT_VERIFIED = {
  code: 'DOMAIN_NOT_VERIFIED',
  status: 400,
  message: 'The domain is not verified yet: verify it before asking for its certificate.',
} as const;
export const SSL_ALREADY_ISSUED = {
  code: 'SSL_ALREADY_ISSUED',
  status: 400,
  message: 'This domain already has its SSL certificate.',
} as const;
export const DNS_ZONE_UNAVAILABLE = {
  code: 'DNS_ZONE_UNAVAILABLE',
  status: 503,
  message: 'The managed DNS zone could not be created or removed. Try again later.',
} as const;
export const DNS_LOOKUP_UNAVAILABLE = {
  code: 'DNS_LOOKUP_UNAVAILABLE',
  status: 503,
  message: "The platform's DNS resolver did not answer, so nothing was checked and nothing changed. Try again later.",
} as const;
// Geo rules (spec endpoint 12): the spec names these conditions only, so the codes and statuses are ours.
export const GEO_COUNTRY_INVALID = {
  code: 'GEO_COUNTRY_INVALID',
  status: 400,
  message: 'geo_countries must be ISO 3166-1 alpha-2 country codes, like DE or US; details.invalid lists the others.',
} as const;
export const GEO_COUNTRIES_REQUIRED = {
  code: 'GEO_COUNTRIES_REQUIRED',
  status: 400,
  message: 'geo_countries must name at least one country unless geo_mode is off.',
} as const;
export const DOMAIN_NOT_ON_DEDICATED_ZONE = {
  code: 'DOMAIN_NOT_ON_DEDICATED_ZONE',
  status: 409,
  message: 'Geo rules need the domain on its own pull zone, which it gets once verified and its certificate is set up.',
} as const;
// Not a failure: the policy is saved (details.domain) and the platform keeps applying it; 202, accepted and not yet done.
export const GEO_POLICY_NOT_APPLIED = {
  code: 'GEO_POLICY_NOT_APPLIED',
  status: 202,
  message: 'The geo policy is saved but the CDN did not take it yet; it is applied automatically when the CDN answers.',
} as const;

import { access } from '../../access/rules.ts';
import type { RouteRow } from './route-row.ts';

/** Custom domains, their TLS and geo rules (docs/domains.md). */
export const domainRoutes = [
  // Custom domains (docs/domains.md): connecting and removing one is a settings change (admins);
  // any member may read them or ask for a verification (DNS look-ups change nothing but the status).
  {
    method: 'POST',
    path: '/api/v1/projects/{id}/domains',
    handler: 'handlers/http/domains/add-domain.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'dns:zones'],
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{id}/domains',
    handler: 'handlers/http/domains/list-domains.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    method: 'GET',
    path: '/api/v1/domains/{id}',
    handler: 'handlers/http/domains/get-domain.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/domains/{id}/verify',
    handler: 'handlers/http/domains/verify-domain.ts',
    access: access.team('member', { team: 'resource' }),
    // A domain that becomes verified gets its first TLS attempt queued.
    uses: ['table:read', 'table:write', 'sslRetries:send'],
  },
  {
    // Spec endpoint 20: like verify, an action on the domain's state any member may ask for.
    method: 'POST',
    path: '/api/v1/domains/{id}/retry-ssl',
    handler: 'handlers/http/domains/retry-ssl.ts',
    access: access.team('member', { team: 'resource' }),
    // The attempt is claimed here and queued for the ssl-retries worker, which makes its ACM, CloudFront and Route 53 calls.
    uses: ['table:read', 'table:write', 'sslRetries:send'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/domains/{id}',
    handler: 'handlers/http/domains/remove-domain.ts',
    access: access.team('admin', { team: 'resource' }),
    // sslRetries:send: the teardown of the domain's distribution and certificate is queued.
    uses: ['table:read', 'table:write', 'dns:zones', 'sslRetries:send'],
  },
  {
    // Geo rules are a settings change (admins); a CDN failure leaves the policy saved and queued for the geo-filters worker.
    method: 'PATCH',
    path: '/api/v1/domains/{id}/geo-filter',
    handler: 'handlers/http/domains/set-geo-filter.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'cdn:distributions', 'geoFilters:send'],
  },
] as const satisfies readonly RouteRow[];

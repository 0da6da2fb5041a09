import { access } from '../access.ts';
import type { RouteRow } from './route-row.ts';

/** The functions' queued door (spec endpoint 10, docs/functions.md). */
export const functionRoutes = [
  // Functions, queued door (spec endpoint 10): public; rate and in-flight caps are table counters.
  {
    method: 'POST',
    path: '/api/v1/public/functions/{subdomain}/{name}',
    handler: 'handlers/http/functions/invoke-function.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'bundles:write', 'invocations:send'],
  },
  {
    method: 'GET',
    path: '/api/v1/public/functions/{subdomain}/{name}/invocations/{id}',
    handler: 'handlers/http/functions/poll-invocation.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'bundles:read'],
  },
] as const satisfies readonly RouteRow[];

import { access } from '../../access/rules.ts';
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
  {
    // The project's completion callback secret (lib/functions/callback-secret.ts), made on first read.
    method: 'GET',
    path: '/api/v1/projects/{id}/functions/callback-secret',
    handler: 'handlers/http/projects/get-callback-secret.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
  {
    // A new callback secret; deliveries are signed with it from now on.
    method: 'POST',
    path: '/api/v1/projects/{id}/functions/callback-secret/rotate',
    handler: 'handlers/http/projects/rotate-callback-secret.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
  {
    // Run now: a queued invocation with trigger `manual` (lib/functions/queued-door.ts runNow), as the queued door's.
    method: 'POST',
    path: '/api/v1/projects/{id}/functions/{name}/runs',
    handler: 'handlers/http/projects/run-function.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'bundles:write', 'invocations:send'],
    docs: {
      note:
        'Answers 202 `{invocation_id, status, poll_url}` as the queued door does; the handler gets a POST with the body sent ' +
        '(if any, with its Content-Type), and the invocation has `trigger: manual`. 404 `FUNCTION_NOT_FOUND` when the live ' +
        "deployment has no such function; 429 at the team's in-flight cap.",
    },
  },
] as const satisfies readonly RouteRow[];

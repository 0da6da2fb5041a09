import { access } from '../../access/rules.ts';
import { publishUses, type RouteRow } from './route-row.ts';

/** Sites: direct uploads, projects, deployments, screenshots, analytics, function invocations (docs/sites.md). */
export const siteRoutes = [
  // Sites: direct uploads, projects, deployments (docs/sites.md)
  {
    method: 'POST',
    path: '/api/v1/uploads',
    handler: 'handlers/http/uploads/begin-upload.ts',
    access: access.team('member'),
    uses: ['table:read', 'table:write', 'bundles:read', 'bundles:write', 'scheduler:write'],
    timeoutSeconds: 29,
    memoryMb: 1024,
  },
  {
    method: 'PUT',
    path: '/api/v1/uploads/{upload_id}/files/{hash}',
    handler: 'handlers/http/uploads/put-upload-file.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'bundles:read', 'sites:write'],
    timeoutSeconds: 29,
  },
  {
    method: 'POST',
    path: '/api/v1/uploads/{upload_id}/files',
    handler: 'handlers/http/uploads/upload-files.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'bundles:read', 'sites:write'],
    timeoutSeconds: 29,
    memoryMb: 1024,
  },
  {
    method: 'POST',
    path: '/api/v1/uploads/{upload_id}/files/{hash}/upload-url',
    handler: 'handlers/http/uploads/large-file-upload-url.ts',
    access: access.team('member', { team: 'resource' }),
    // A presigned URL acts with the signer's rights: the handler must be allowed the PUT it signs.
    uses: ['table:read', 'bundles:read', 'bundles:write'],
    timeoutSeconds: 29,
  },
  {
    method: 'POST',
    path: '/api/v1/uploads/{upload_id}/files/{hash}/complete',
    handler: 'handlers/http/uploads/complete-large-file.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'bundles:read', 'bundles:write', 'sites:read', 'sites:write'],
    timeoutSeconds: 29,
  },
  {
    method: 'POST',
    path: '/api/v1/uploads/{upload_id}/finalize',
    handler: 'handlers/http/uploads/finalize-upload.ts',
    access: access.team('member', { team: 'resource' }),
    // bundles:write: the functions build stores each bundle and its build log there.
    uses: publishUses,
    // API Gateway's integration limit: finalize may copy thousands of another project's files.
    timeoutSeconds: 29,
    // esbuild runs in this Lambda (the functions build): its bundles go through memory.
    memoryMb: 1024,
    // The functions build imports esbuild at run time; its binary is the x86_64 Linux one npm installed here.
    runtimePackages: { names: ['esbuild', '@esbuild/linux-x64'], architecture: 'x86_64' },
  },
  {
    method: 'POST',
    path: '/api/v1/projects/{id}/uploads',
    handler: 'handlers/http/projects/begin-project-upload.ts',
    access: access.team('member', { team: 'resource' }),
    // sites:read: the live deployment's route manifest names the objects a redeploy need not send (lib/publishing/blobs.ts liveObjects).
    uses: ['table:read', 'table:write', 'sites:read', 'bundles:read', 'bundles:write', 'scheduler:write'],
    timeoutSeconds: 29,
    memoryMb: 1024,
  },
  {
    method: 'GET',
    path: '/api/v1/projects',
    handler: 'handlers/http/projects/list-projects.ts',
    access: access.team('member'),
    uses: ['table:read'],
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{id}',
    handler: 'handlers/http/projects/get-project.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    // Settings can link Git, switch auto-deploy and delete analytics rows: team admins and owners.
    method: 'PATCH',
    path: '/api/v1/projects/{id}',
    handler: 'handlers/http/projects/update-project.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{id}/deployments',
    handler: 'handlers/http/projects/list-deployments.ts',
    access: access.team('member', { team: 'resource' }),
    // Writes only to end a build on the page whose worker was lost (lib/builds/lost.ts), as the two reads below.
    uses: ['table:read', 'table:write'],
    docs: {
      note:
        'Newest first, in numbered pages as the admin abuse-scans listing: `page` (from 1, default 1), ' +
        '`page_size` (1 to 100, default 20); `data` is {page, page_size, total, deployments}. ' +
        'Reads deployment items only, never build log lines.',
    },
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{id}/deployments/{deployment_id}',
    handler: 'handlers/http/projects/get-deployment.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write'],
    docs: {
      note:
        'Besides the listing fields: `build_log`, `functions` and `serving_rules`, what publishing compiled of the ' +
        "deployment's `_redirects` and `_headers` (docs/serving.md): `{redirects, headers, skipped: [{file, line, reason}], " +
        'skipped_count}` (`line` 1-based; `skipped` keeps the first 100 lines, `skipped_count` counts them all).',
    },
  },
  {
    // Sets `deleting` and queues the removal (lib/lifecycle/project-deletion.ts); team admins and owners.
    method: 'DELETE',
    path: '/api/v1/projects/{id}',
    handler: 'handlers/http/projects/delete-project.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'deletions:send'],
  },
  {
    // The project's latest screenshot (lib/screenshots/jobs.ts), with a signed link to the image.
    method: 'GET',
    path: '/api/v1/projects/{id}/screenshot',
    handler: 'handlers/http/projects/get-screenshot.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'bundles:read'],
  },
  {
    // Spec endpoint 21: a capture worker's result, authenticated by the job's single-use token (checked in the handler).
    method: 'PUT',
    path: '/api/v1/public/screenshots/jobs/{job_id}',
    handler: 'handlers/http/screenshots/put-result.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'bundles:write'],
  },
  {
    // Site analytics of a date range (lib/sites/analytics.ts).
    method: 'GET',
    path: '/api/v1/projects/{id}/analytics',
    handler: 'handlers/http/projects/get-project-analytics.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    // The live deployment's functions.
    method: 'GET',
    path: '/api/v1/projects/{id}/functions',
    handler: 'handlers/http/projects/list-functions.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    // A function's recent queued invocations (7-day retention).
    method: 'GET',
    path: '/api/v1/projects/{id}/functions/{name}/invocations',
    handler: 'handlers/http/projects/list-function-invocations.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    // Live tail: the function's console lines, errors and calls while the caller watches; nothing kept (lib/functions/tail.ts).
    method: 'GET',
    path: '/api/v1/projects/{id}/functions/{name}/tail',
    handler: 'handlers/http/projects/tail-function.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'tails:watch'],
    streaming: true,
    // The tail ends itself at 14 minutes (TAIL_MAX_MS), before this.
    timeoutSeconds: 900,
    docs: {
      note: 'Answers `text/event-stream`: `open`, then `console` {at, stream, line}, `error` {at, message, stack} and `call` {at, method, status, duration_ms, outcome} for calls made while it is open, and `end` after 14 minutes. Nothing is stored.',
    },
  },
  {
    // One queued invocation with its console output (never in the public poll).
    method: 'GET',
    path: '/api/v1/projects/{id}/functions/{name}/invocations/{invocation_id}',
    handler: 'handlers/http/projects/get-function-invocation.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'bundles:read'],
  },
] as const satisfies readonly RouteRow[];

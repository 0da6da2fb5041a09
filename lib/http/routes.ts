import type { SecretName } from '../resources.ts';
import { access, type AccessRule } from './access.ts';

/**
 * The one route table: the CDK stack makes one Lambda per row on the HTTP API
 * and the local API server dispatches to the same handler files. Adding an
 * endpoint is one row here plus one handler file.
 *
 * `uses` lists what the handler touches; the stack grants exactly that.
 */
export type ResourceUse =
  | 'table:read'
  | 'table:write'
  /** UpdateItem on site analytics rows only (partition keys ANALYTICS#...): the serve-site Lambda's counters. */
  | 'table:analytics'
  | 'sites:read'
  | 'sites:write'
  | 'bundles:read'
  | 'bundles:write'
  | 'invocations:send'
  | 'deletions:send'
  | 'screenshots:send'
  | 'abuseScans:send'
  | 'sslRetries:send'
  | 'geoFilters:send'
  | 'builds:send'
  /** Starts, reads and stops builds of the platform's CodeBuild project (the builds worker). */
  | 'builds:run'
  | 'scheduler:write'
  | 'mail:send'
  /** Creates and deletes the Route 53 hosted zones of managed-DNS domains. */
  | 'dns:zones'
  /** Reads and updates the configuration of the domains' CloudFront distributions (their geo restriction). */
  | 'cdn:distributions'
  /** Lists the account's distributions and their tags; disables and deletes those no domain names (the sweep). */
  | 'cdn:sweep'
  /**
   * TLS of custom domains (lib/domains/tls.ts): ACM certificates, the domains'
   * CloudFront distributions, records in managed zones, and sending to the
   * SSL-retries queue and (after the last attempt) its dead-letter queue.
   */
  | 'tls:provision'
  /** Reads one secret of lib/resources.ts on cold start (the handler calls lib/aws/secrets.ts loadSecrets). */
  | `secrets:${SecretName}`;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteRow {
  method: HttpMethod;
  /** API Gateway route path, with {param} segments. */
  path: string;
  /** Lambda entry, relative to the repository root. */
  handler: string;
  access: AccessRule;
  uses: readonly ResourceUse[];
  /** Lambda timeout in seconds (default 10). */
  timeoutSeconds?: number;
  /** Lambda memory in MB (default 512). */
  memoryMb?: number;
  /**
   * Packages the handler imports at run time from node_modules rather than
   * from its bundle (a bundler with its native binary, say): the stack keeps
   * them out of the bundle and copies them from the repository's node_modules
   * into the Lambda asset, with no install at synth. The Lambda runs on the
   * architecture the copied binaries were installed for.
   */
  runtimePackages?: { names: readonly string[]; architecture: 'x86_64' | 'arm64' };
  /** For the OpenAPI document: what the caller must know beyond the access rule, and request headers it must send (name: meaning). */
  docs?: { note?: string; requiredHeaders?: Readonly<Record<string, string>> };
}

export const routes = [
  {
    method: 'GET',
    path: '/api/v1/team/profile',
    handler: 'handlers/http/teams/get-current-team-profile.ts',
    access: access.team('member'),
    uses: ['table:read'],
  },
  {
    method: 'PATCH',
    path: '/api/v1/team/profile',
    handler: 'handlers/http/teams/update-current-team-profile.ts',
    access: access.team('admin'),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/teams/{team}/profile',
    handler: 'handlers/http/teams/get-team-profile.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    // The owner asks for the team's deletion (purged after a grace period unless a legal hold blocks it), or takes it back.
    method: 'POST',
    path: '/api/v1/team/deletion',
    handler: 'handlers/http/teams/request-team-deletion.ts',
    access: access.team('owner', { sessionOnly: true }),
    uses: ['table:read', 'table:write', 'scheduler:write'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/deletion',
    handler: 'handlers/http/teams/cancel-team-deletion.ts',
    access: access.team('owner', { sessionOnly: true }),
    uses: ['table:read', 'table:write', 'scheduler:write'],
  },
  // The console's sign-in: e-mail links, the session cookie (docs/dashboard.md)
  {
    // The address is the proof: anyone may ask for a link; limited per address and per IP address like confirmation resends.
    method: 'POST',
    path: '/api/v1/auth/sign-in-link',
    handler: 'handlers/http/auth/request-sign-in-link.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'mail:send'],
  },
  {
    // The single-use token in the body is the credential; the reply sets the session cookie.
    method: 'POST',
    path: '/api/v1/auth/sign-in',
    handler: 'handlers/http/auth/sign-in.ts',
    access: access.public(),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'POST',
    path: '/api/v1/auth/sign-out',
    handler: 'handlers/http/auth/sign-out.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/me',
    handler: 'handlers/http/me/get-me.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    method: 'GET',
    path: '/api/v1/me/teams',
    handler: 'handlers/http/me/list-my-teams.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    // Pending invitations to the signed-in person's own address.
    method: 'GET',
    path: '/api/v1/me/invitations',
    handler: 'handlers/http/me/list-my-invitations.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/me/invitations/{id}/accept',
    handler: 'handlers/http/me/accept-invitation.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  // The console's team administration: members, invitations, API keys
  {
    method: 'GET',
    path: '/api/v1/team/members',
    handler: 'handlers/http/teams/list-members.ts',
    access: access.team('member'),
    uses: ['table:read'],
  },
  {
    // Between admin and member; the owner's role moves only by the ownership transfer.
    method: 'PATCH',
    path: '/api/v1/team/members/{user_id}',
    handler: 'handlers/http/teams/update-member.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/members/{user_id}',
    handler: 'handlers/http/teams/remove-member.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/team/invitations',
    handler: 'handlers/http/teams/list-invitations.ts',
    access: access.team('admin'),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/team/invitations',
    handler: 'handlers/http/teams/create-invitation.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write', 'mail:send'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/invitations/{id}',
    handler: 'handlers/http/teams/revoke-invitation.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    // Keys are managed by people: an API key neither lists, makes nor revokes keys.
    method: 'GET',
    path: '/api/v1/team/api-keys',
    handler: 'handlers/http/teams/list-api-keys.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/team/api-keys',
    handler: 'handlers/http/teams/create-api-key.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/api-keys/{id}',
    handler: 'handlers/http/teams/revoke-api-key.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  // Administration (platform administrators only)
  {
    method: 'POST',
    path: '/api/v1/admin/teams/{id}/legal-hold',
    handler: 'handlers/http/admin/set-legal-hold.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write', 'scheduler:write'],
  },
  {
    // Teams pending deletion, earliest deadline first; a held team past its deadline is `overdue`.
    method: 'GET',
    path: '/api/v1/admin/deletions',
    handler: 'handlers/http/admin/list-deletions.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // Spec endpoint 13: one team's functions telemetry, from the rows the doors write (lib/functions/telemetry-report.ts).
    method: 'GET',
    path: '/api/v1/admin/teams/{id}/functions',
    handler: 'handlers/http/admin/get-team-functions-telemetry.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // Spec endpoint 18: the latest finished keyword scan per project and branch (lib/abuse/scans.ts), one index partition per review status.
    method: 'GET',
    path: '/api/v1/admin/abuse-scans',
    handler: 'handlers/http/admin/list-abuse-scans.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // An administrator's decision on a listed scan: new to dismissed or actioned, once (a conditional transaction).
    method: 'POST',
    path: '/api/v1/admin/abuse-scans/{id}/review',
    handler: 'handlers/http/admin/review-abuse-scan.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  {
    // Spec endpoint 19: attention queues, each one index partition read by key (lib/attention/, docs/attention.md).
    method: 'GET',
    path: '/api/v1/admin/attention',
    handler: 'handlers/http/admin/get-attention.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // The operator command behind the billing queues: a team's subscription (plan, status, cancel_at_period_end).
    method: 'PUT',
    path: '/api/v1/admin/teams/{id}/subscription',
    handler: 'handlers/http/admin/set-team-subscription.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  {
    // `{"action": "retry"}` processes a failed webhook event's kept payload again, as a delivery would;
    // `{"action": "dismiss"}` takes it out of the attention queue unprocessed (docs/attention.md).
    method: 'POST',
    path: '/api/v1/admin/failed-webhook-events/{id}',
    handler: 'handlers/http/admin/act-on-failed-webhook-event.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  {
    // Takes a feedback out of the attention inbox; the first mark stands.
    method: 'POST',
    path: '/api/v1/admin/feedback/{id}/handled',
    handler: 'handlers/http/admin/mark-feedback-handled.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  // Trust and safety (docs/trust-and-safety.md)
  {
    // Spec endpoint 3: anyone may report, with or without an account; limits are table counters (lib/abuse/).
    method: 'POST',
    path: '/api/v1/public/abuse-reports',
    handler: 'handlers/http/abuse/submit-abuse-report.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'mail:send'],
  },
  {
    // The billing provider's subscription events (docs/attention.md): no account, the Stripe-Signature over the
    // raw body is the credential (checked in the handler, before anything is read or recorded).
    method: 'POST',
    path: '/api/v1/webhooks/billing',
    handler: 'handlers/http/webhooks/receive-billing-event.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'secrets:billingWebhook'],
    docs: {
      note: 'Stripe webhook endpoint: the body is a Stripe event, verified by its signature (docs/attention.md).',
      requiredHeaders: {
        'Stripe-Signature': 't=<epoch seconds>,v1=<hex HMAC-SHA256 of "t.body" under the endpoint secret>; t within 300 s',
      },
    },
  },
  // Accounts: ownership transfer, notices, e-mail confirmation, personal data export
  {
    // Feedback from a signed-in user about the current team's dashboard; the admin attention inbox lists it.
    method: 'POST',
    path: '/api/v1/feedback',
    handler: 'handlers/http/feedback/submit-feedback.ts',
    access: access.team('member', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'POST',
    path: '/api/v1/team/members/transfer',
    handler: 'handlers/http/teams/transfer-ownership.ts',
    // API keys never hold the owner role, so this refuses them too.
    access: access.team('owner'),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/notices',
    handler: 'handlers/http/notices/list-notices.ts',
    // Notices are addressed to a person: an API key has no watermark or dismissals.
    access: access.team('member', { sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/notices/seen',
    handler: 'handlers/http/notices/mark-notices-seen.ts',
    // The watermark is per person, across teams.
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'POST',
    path: '/api/v1/notices/{key}/dismiss',
    handler: 'handlers/http/notices/dismiss-notice.ts',
    access: access.team('member', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'POST',
    path: '/api/v1/me/email-verification/resend',
    handler: 'handlers/http/account/resend-email-verification.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read', 'table:write', 'mail:send'],
  },
  {
    method: 'POST',
    path: '/api/v1/email-verification/confirm',
    handler: 'handlers/http/account/confirm-email-verification.ts',
    // The single-use token in the body is the credential (the link is opened from the mailbox).
    access: access.public(),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/me/export',
    handler: 'handlers/http/account/export-personal-data.ts',
    // An API key identifies no person, so there is no personal data to export for it.
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read'],
  },
  // Integrations: Git hosting connect, SSO discovery, environment variables
  {
    method: 'GET',
    path: '/api/v1/auth/git-host/connect',
    handler: 'handlers/http/auth/git-host-connect.ts',
    // The state binds a person who completes the install in a browser; an API key is no person.
    access: access.team('admin', { team: 'resource', sessionOnly: true }),
    uses: ['table:read', 'secrets:gitState'],
  },
  {
    method: 'POST',
    path: '/api/v1/team/sso/discover',
    handler: 'handlers/http/teams/discover-sso.ts',
    access: access.team('admin'),
    uses: ['table:read'],
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{id}/env',
    handler: 'handlers/http/projects/list-env-variables.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/projects/{id}/env/bulk',
    handler: 'handlers/http/projects/import-env-variables.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
  {
    method: 'PUT',
    path: '/api/v1/projects/{id}/env/{name}',
    handler: 'handlers/http/projects/set-env-variable.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
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
    uses: [
      'table:read',
      'table:write',
      'bundles:read',
      'bundles:write',
      'sites:read',
      'sites:write',
      'scheduler:write',
      'screenshots:send',
      'abuseScans:send',
    ],
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
    // sites:read: the live deployment's route manifest names the objects a redeploy need not send (lib/uploads/blobs.ts liveObjects).
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
  },
  {
    // Sets `deleting` and queues the removal (lib/projects/deletion.ts); team admins and owners.
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
    // One queued invocation with its console output (never in the public poll).
    method: 'GET',
    path: '/api/v1/projects/{id}/functions/{name}/invocations/{invocation_id}',
    handler: 'handlers/http/projects/get-function-invocation.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'bundles:read'],
  },
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
  // Builds (docs/builds.md): Git webhooks in, builds through the builds queue, their logs
  {
    // The delivery's signature under a connected project's webhook secret is the credential (checked in lib/builds/intake.ts).
    method: 'POST',
    path: '/api/v1/webhooks/git/github',
    handler: 'handlers/http/webhooks/receive-github-event.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'builds:send', 'secrets:envEncryption'],
    docs: {
      note: 'GitHub webhook endpoint (push, pull_request, ping): 202 with what was queued and what was ignored, and why (docs/builds.md).',
      requiredHeaders: {
        'X-Hub-Signature-256': 'sha256=<hex HMAC-SHA256 of the raw body under the project webhook secret>',
        'X-GitHub-Event': 'push, pull_request or ping (others are answered 202 and ignored)',
        'X-GitHub-Delivery': 'the delivery id; a delivery is acted on once',
      },
    },
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/git/gitlab',
    handler: 'handlers/http/webhooks/receive-gitlab-event.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'builds:send', 'secrets:envEncryption'],
    docs: {
      note: 'GitLab webhook endpoint (Push Hook, Merge Request Hook): 202 with what was queued and what was ignored, and why (docs/builds.md).',
      requiredHeaders: {
        'X-Gitlab-Token': 'the project webhook secret',
        'X-Gitlab-Event': 'Push Hook or Merge Request Hook (others are answered 202 and ignored)',
        'X-Gitlab-Event-UUID': 'the delivery id; a delivery is acted on once',
      },
    },
  },
  {
    // A project connected to a repository, made without an upload; settings link Git, so team admins and owners.
    method: 'POST',
    path: '/api/v1/projects',
    handler: 'handlers/http/projects/create-project.ts',
    access: access.team('admin'),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
  {
    // A new webhook secret, answered once as data.secret; the previous one stops matching at once.
    method: 'POST',
    path: '/api/v1/projects/{id}/git/webhook-secret',
    handler: 'handlers/http/projects/rotate-webhook-secret.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
  {
    // A build by hand: 202 with the queued deployment.
    method: 'POST',
    path: '/api/v1/projects/{id}/builds',
    handler: 'handlers/http/projects/start-build.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'builds:send'],
  },
  {
    // Clears the auto-deploy breaker (the only operation besides build outcomes that writes it).
    method: 'POST',
    path: '/api/v1/projects/{id}/auto-deploy/resume',
    handler: 'handlers/http/projects/resume-auto-deploy.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write'],
  },
  {
    // A build's log from a line number on: the polling cursor a running build is followed with.
    method: 'GET',
    path: '/api/v1/projects/{id}/deployments/{deployment_id}/log',
    handler: 'handlers/http/projects/get-build-log.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write'],
  },
  {
    // Any member who may deploy may roll back.
    method: 'POST',
    path: '/api/v1/projects/{id}/promote',
    handler: 'handlers/http/projects/promote-deployment.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write'],
  },
] as const satisfies readonly RouteRow[];

export type RouteKey = `${(typeof routes)[number]['method']} ${(typeof routes)[number]['path']}`;

/**
 * Answers every request no row matches (API Gateway's `$default` route), so
 * that unknown paths get the error envelope: 405 when the path exists under
 * another method, else 404.
 */
export const fallbackRoute = {
  handler: 'handlers/http/fallback.ts',
  access: access.public(),
  uses: [] as readonly ResourceUse[],
} as const;

export function routeKey(row: Pick<RouteRow, 'method' | 'path'>): string {
  return `${row.method} ${row.path}`;
}

export function findRoute(key: string): RouteRow {
  const row = (routes as readonly RouteRow[]).find((r) => routeKey(r) === key);
  if (!row) throw new Error(`No route row for ${key}`);
  return row;
}

const compiled = (routes as readonly RouteRow[]).map((row) => {
  const names: string[] = [];
  const pattern = row.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { row, names, regex: new RegExp(`^${pattern}$`) };
});

/** Matches a concrete path against the table: the row and its path parameters, or why nothing matched. */
export function matchRoute(
  method: string,
  path: string,
): { row: RouteRow; params: Record<string, string> } | { row: null; pathExists: boolean } {
  let pathExists = false;
  for (const { row, names, regex } of compiled) {
    const match = regex.exec(path);
    if (!match) continue;
    pathExists = true;
    if (row.method !== method.toUpperCase()) continue;
    const params: Record<string, string> = {};
    names.forEach((name, i) => {
      params[name] = decodeURIComponent(match[i + 1]!);
    });
    return { row, params };
  }
  return { row: null, pathExists };
}

/** The methods the table serves on a concrete path (empty when the path is unknown). */
export function allowedMethods(path: string): string[] {
  return compiled.filter(({ regex }) => regex.test(path)).map(({ row }) => row.method);
}

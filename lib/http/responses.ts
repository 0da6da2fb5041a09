import * as z from 'zod';
import type { listAbuseScans } from '../abuse/scans.ts';
import type { buildLogPage } from '../builds/operations.ts';
import type { DeploymentDetail, listDeployments } from '../promotion/deployments.ts';
import type { FinalizeResult } from '../publishing/publish.ts';
import { CONNECTION_MODES, DOMAIN_STATUSES, GEO_MODES, SSL_STATUSES, type Domain } from '../domains/domains.ts';
import type { EnvVariableRecord } from '../env/records.ts';
import { ENV_ENVIRONMENTS, ENV_TARGETS, type ParsedEnvContent } from '../env/variables.ts';
import type { InvocationListRow, MemberInvocationView } from '../functions/invocation-views.ts';
import type { ScheduledFunctionView } from '../functions/schedules.ts';
import type { ApiKeySummary } from '../identity/credential-records.ts';
import type { meView, pendingInvitationsOf, teamsOfUser } from '../identity/me.ts';
import type { listVisibleNotices } from '../notices/notices.ts';
import {
  CREATED_CLIENTS,
  FRAMEWORKS,
  GIT_AUTH_MODES,
  PACKAGE_MANAGERS,
  PLATFORM_URL_MODES,
  PREVIEW_BRANCH_MODES,
  type Project,
} from '../projects/projects.ts';
import type { ProjectScreenshot } from '../screenshots/jobs.ts';
import type { ProjectAnalytics } from '../sites/analytics.ts';
import type { IdentityProviderDiscovery } from '../sso/discovery.ts';
import type { PendingDeletion } from '../lifecycle/team-deletion.ts';
import type { invitationView } from '../teams/invite.ts';
import type { teamMembers } from '../teams/members.ts';
import type { UploadSessionView } from '../publishing/sessions.ts';
import type { RouteKey } from './routes.ts';

/**
 * The `data` of the success replies the console reads, for the API reference
 * (lib/http/openapi.ts) and so for the console's generated types
 * (dashboard/src/api-types.ts). Docs time only: no handler imports this, so no
 * bundle carries it. Each schema is checked against the type the code returns
 * (`Fits` below), so `tsc` fails when a reply gains or changes a field the
 * schema does not say.
 */

const text = z.string();
const time = z.string().describe('ISO 8601 UTC');
const nullable = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);
const role = z.enum(['owner', 'admin', 'member']);

const project = z
  .object({
    id: z.uuid(),
    team_id: z.uuid(),
    name: text,
    slug: text,
    subdomain: text,
    production_url: text,
    status: z.enum(['active', 'deleting']),
    framework: z.enum(FRAMEWORKS),
    build_command: nullable(text),
    output_dir: nullable(text),
    root_directory: nullable(text),
    package_manager: nullable(z.enum(PACKAGE_MANAGERS)),
    default_branch: nullable(text),
    repo_default_branch: nullable(text),
    git_provider: nullable(text),
    git_repo_url: nullable(text),
    git_connection_id: nullable(text),
    git_auth_mode: nullable(z.enum(GIT_AUTH_MODES)),
    forge_audience: nullable(text),
    auto_deploy_enabled: z.boolean(),
    auto_deploy_paused_at: nullable(time),
    auto_deploy_pause_reason: nullable(text),
    consecutive_build_failures: z.number(),
    last_build_failure_message: nullable(text),
    mr_previews_enabled: z.boolean(),
    preview_branch_mode: z.enum(PREVIEW_BRANCH_MODES),
    preview_branch_include: z.array(text),
    preview_branch_exclude: z.array(text),
    preview_slug: nullable(text),
    primary_domain_id: nullable(text),
    platform_url_mode: z.enum(PLATFORM_URL_MODES),
    production_branch_deleted_at: nullable(time),
    live_deployment_id: nullable(z.uuid()),
    cdn_pull_zone_id: nullable(z.number()),
    cdn_edge_rule_guid: nullable(text),
    cdn_not_found_edge_rule_guid: nullable(text),
    analytics_enabled: z.boolean(),
    provisional_until: nullable(time),
    created_via: nullable(z.enum(['session', 'push', 'api_key'])),
    created_client: nullable(z.enum(CREATED_CLIENTS)),
    created_at: time,
    updated_at: time,
  })
  .meta({ id: 'Project' });

const deployment = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    team_id: z.uuid(),
    status: z.enum(['uploading', 'queued', 'building', 'ready', 'failed', 'canceled', 'skipped']),
    label: nullable(text),
    created_at: time,
    ready_at: nullable(time),
    file_count: z.number(),
    total_bytes: z.number(),
    is_live: z.boolean(),
    trigger: nullable(z.enum(['push', 'merge_request', 'manual'])),
    target: nullable(z.enum(['production', 'preview'])),
    branch: nullable(text),
    commit_sha: nullable(text),
    commit_message: nullable(text),
    merge_request: nullable(z.number()),
    preview_url: nullable(text),
    queued_at: nullable(time),
    started_at: nullable(time),
    finished_at: nullable(time),
    failure_message: nullable(text),
    skip_reason: nullable(text),
    log_lines: z.number().describe("Lines in the build's log (GET .../log reads them from a cursor)."),
  })
  .meta({ id: 'Deployment' });

const servingRules = z
  .object({
    redirects: z.number(),
    headers: z.number(),
    skipped: z.array(z.object({ file: text, line: z.number(), reason: text })),
    skipped_count: z.number(),
  })
  .meta({ id: 'ServingRulesSummary' });

const deploymentDetail = z
  .object({ ...deployment.shape, build_log: z.array(text), functions: z.array(text), serving_rules: servingRules })
  .meta({ id: 'DeploymentDetail' });

const deploymentPage = z
  .object({ page: z.number(), page_size: z.number(), total: z.number(), deployments: z.array(deployment) })
  .meta({ id: 'DeploymentPage' });

const me = z
  .object({
    user_id: z.uuid(),
    email: text,
    name: nullable(text),
    email_verified: z.boolean(),
    is_platform_admin: z.boolean(),
    default_team_id: nullable(z.uuid()),
  })
  .meta({ id: 'Me' });

const teamProfile = { id: z.uuid(), name: text, slug: text, display_label: text, slug_chosen_at: nullable(time) };

const myTeam = z
  .object({ ...teamProfile, role, joined_at: time, deletion: z.object({ status: text, purge_after: nullable(time) }) })
  .meta({ id: 'MyTeam' });

const invitation = z
  .object({
    id: z.uuid(),
    team_id: z.uuid(),
    email: text,
    role,
    status: z.enum(['pending', 'accepted', 'expired']),
    created_at: time,
    expires_at: time,
    accepted_at: nullable(time),
    invited_by: nullable(text),
  })
  .meta({ id: 'Invitation' });

const myInvitation = z.object({ ...invitation.shape, team_name: nullable(text) }).meta({ id: 'MyInvitation' });

const member = z.object({ user_id: z.uuid(), email: nullable(text), name: nullable(text), role, joined_at: time }).meta({ id: 'Member' });

const apiKey = z
  .object({
    id: z.uuid(),
    name: text,
    role: z.enum(['admin', 'member']),
    prefix: text.describe("The token's first characters, so a person can tell keys apart."),
    created_at: time,
    created_by: nullable(text),
    revoked_at: nullable(time),
  })
  .meta({ id: 'ApiKey' });

const newApiKey = z.object({ ...apiKey.shape, token: text.describe('Shown in this reply only.') }).meta({ id: 'NewApiKey' });

const discovery = z
  .object({
    issuer: text,
    provider: z.enum(['generic_oidc', 'keycloak', 'authentik']),
    authorization_endpoint: text,
    token_endpoint: text,
    jwks_uri: text,
    userinfo_endpoint: text,
    redirect_uri: text,
    recommended_is_id_token_mapping: z.boolean(),
    suggested_issuer: text,
    suggested_name: text,
    warnings: z.array(z.object({ code: text, docs_url: text, message: text })),
  })
  .meta({ id: 'IdentityProviderDiscovery' });

const statusClasses = z.object({ '2xx': z.number(), '3xx': z.number(), '4xx': z.number(), '5xx': z.number() });

const analytics = z
  .object({
    analytics_enabled: z.boolean(),
    from: text,
    to: text,
    totals: z.object({ requests: z.number(), bytes: z.number(), status_classes: statusClasses }),
    days: z.array(z.object({ date: text, requests: z.number(), bytes: z.number(), status_classes: statusClasses })),
    top_paths: z.array(z.object({ path: text, requests: z.number() })),
  })
  .meta({ id: 'ProjectAnalytics' });

const envVariable = z
  .object({
    name: text,
    environment: z.enum(ENV_ENVIRONMENTS),
    targets: z.array(z.enum(ENV_TARGETS)),
    created_at: time,
    updated_at: time,
  })
  .meta({ id: 'EnvVariable' });

const envRejection = z.object({
  name: z.optional(text),
  line: z.optional(z.number()),
  reason: text,
  message: text,
});

const envImport = z
  .object({
    environment: z.enum(ENV_ENVIRONMENTS),
    targets: z.array(z.enum(ENV_TARGETS)),
    created: z.array(text),
    updated: z.array(text),
    rejected: z.array(envRejection),
  })
  .meta({ id: 'EnvImport' });

const notices = z
  .object({
    notices: z.array(
      z.object({
        key: text,
        title: text,
        body: nullable(text),
        published_at: time,
        expires_at: nullable(time),
        min_role: nullable(role),
        unread: z.boolean(),
      }),
    ),
    unread_count: z.number(),
    seen_at: nullable(time),
  })
  .meta({ id: 'Notices' });

const fn = z
  .object({
    id: z.uuid(),
    name: text,
    url: text,
    deployment_id: z.uuid(),
    entry_path: text,
    bundle_bytes: z.number(),
    created_at: time,
    schedule: nullable(text).describe('Its `config.schedule` (five-field cron in UTC, or a macro), or null.'),
    next_run_at: nullable(time),
    skipped_runs: z.number(),
  })
  .meta({ id: 'FunctionView' });

const invocationStatus = z.enum(['pending', 'running', 'completed', 'failed', 'timed_out']);
const trigger = z.enum(['queued', 'schedule', 'manual']).describe('What started it: the public door, a schedule, or run now.');

const invocationSummary = z
  .object({
    id: z.uuid(),
    status: invocationStatus,
    trigger,
    created_at: time,
    started_at: nullable(time),
    finished_at: nullable(time),
    response_status: z.optional(z.number()),
    error_message: z.optional(text),
  })
  .meta({ id: 'InvocationSummary' });

const invocation = z
  .object({
    id: z.uuid(),
    status: invocationStatus,
    started_at: nullable(time),
    finished_at: nullable(time),
    response_status: z.optional(z.number()),
    response_headers: z.optional(z.record(text, text)),
    response_body: z.optional(text),
    error_message: z.optional(text),
    function_name: text,
    trigger,
    created_at: time,
    expires_at: time,
    console: z.array(z.object({ at: time, stream: z.enum(['stdout', 'stderr']), line: text })),
    callback: nullable(
      z.object({
        url: text,
        attempts: z.number(),
        last_status: nullable(z.number()),
        last_error: nullable(text),
        delivered_at: nullable(time),
      }),
    ),
  })
  .meta({ id: 'Invocation' });

const abuseScan = z
  .object({
    branch: text,
    created_at: time,
    deployment_id: z.uuid(),
    error: nullable(text),
    files_scanned: z.number(),
    handled_at: nullable(time),
    handled_by: nullable(text),
    id: z.uuid(),
    matches: z.array(
      z.object({
        rule_id: text,
        category: text,
        hits: z.number(),
        examples: z.array(z.object({ path: text, snippet: text })),
      }),
    ),
    priority: nullable(text),
    project_id: z.uuid(),
    report_count: z.number(),
    resolution: nullable(text),
    review_status: z.enum(['new', 'dismissed', 'actioned']),
    scanned_at: nullable(time),
    score: z.number(),
    site_host: text,
    status: z.enum(['queued', 'finished', 'failed']),
    team_id: z.uuid(),
    team_name: nullable(text),
    truncated: z.boolean(),
  })
  .meta({ id: 'AbuseScan' });

const pendingDeletion = z
  .object({
    team_id: z.uuid(),
    team_name: text,
    deletion_requested_at: time,
    purge_after: time,
    legal_hold: z.boolean(),
    overdue: z.boolean(),
  })
  .meta({ id: 'PendingDeletion' });

const dnsRecord = z.object({ name: text, type: z.enum(['CNAME', 'ALIAS', 'TXT']), value: text, note: text }).meta({ id: 'DnsRecord' });

const domain = z
  .object({
    id: z.uuid(),
    team_id: z.uuid(),
    project_id: z.uuid(),
    domain: text,
    is_apex: z.boolean(),
    connection_mode: z.enum(CONNECTION_MODES),
    status: z.enum(DOMAIN_STATUSES),
    verification_token: text,
    verified_at: nullable(time),
    last_verification_attempt: nullable(time),
    ns_delegated_at: nullable(time),
    created_at: time,
    updated_at: time,
    deleted_at: nullable(time),
    ssl_status: z.enum(SSL_STATUSES),
    ssl_attempts: z.number(),
    ssl_error: nullable(text),
    ssl_error_code: nullable(text),
    ssl_issued_at: nullable(time),
    ssl_last_attempt_at: nullable(time),
    ssl_provisioning_started_at: nullable(time),
    geo_mode: z.enum(GEO_MODES),
    geo_countries: z.array(text),
    pull_zone_id: nullable(z.number()),
    cdn_dns_ns1: nullable(text),
    cdn_dns_ns2: nullable(text),
    cdn_dns_zone_id: nullable(z.number()),
    dns_records: z.array(dnsRecord),
    next_retry_at: z.optional(time),
    debug_url: z.optional(text),
    supports_geo_filtering: z.boolean(),
  })
  .meta({ id: 'Domain' });

const uploadSession = z
  .object({
    upload_id: z.uuid(),
    deployment_id: z.uuid(),
    project_id: z.uuid(),
    project: z.optional(project).describe('The new project, when this upload made it.'),
    expires_at: time,
    known_count: z.number(),
    missing: z.array(text).describe('The hashes of the manifest the platform lacks: send only these.'),
    total_bytes_to_send: z.number(),
  })
  .meta({ id: 'UploadSession' });

const finalized = z
  .object({
    upload_id: z.uuid(),
    deployment_id: z.uuid(),
    project_id: z.uuid(),
    status: z.literal('ready'),
    url: text,
    file_count: z.number(),
    total_bytes: z.number(),
    ready_at: time,
  })
  .meta({ id: 'FinalizedUpload' });

const screenshot = z
  .object({
    job_id: z.uuid(),
    deployment_id: z.uuid(),
    captured_at: time,
    capture_http_status: nullable(z.number()),
    width: z.number(),
    height: z.number(),
    image_url: text.describe('A signed link to the PNG, valid 15 minutes.'),
    image_url_expires_at: time,
  })
  .meta({ id: 'ProjectScreenshot' });

const buildLogPageSchema = z
  .object({
    deployment_id: z.uuid(),
    status: text,
    lines: z.array(text),
    cursor: z.number(),
    next_cursor: z.number(),
    done: z.boolean(),
  })
  .meta({ id: 'BuildLogPage' });

/** The `data` of each documented route's success reply, with its status when it is not 200. */
export const responseSchemas: Partial<Record<RouteKey, { status?: 201; data: z.ZodType }>> = {
  'GET /api/v1/me': { data: me },
  'GET /api/v1/me/teams': { data: z.array(myTeam) },
  'GET /api/v1/me/invitations': { data: z.array(myInvitation) },
  'GET /api/v1/team/members': { data: z.array(member) },
  'GET /api/v1/team/invitations': { data: z.array(invitation) },
  'POST /api/v1/team/invitations': { status: 201, data: invitation },
  'GET /api/v1/team/api-keys': { data: z.array(apiKey) },
  'POST /api/v1/team/api-keys': { status: 201, data: newApiKey },
  'POST /api/v1/team/sso/discover': { data: discovery },
  'GET /api/v1/projects': { data: z.object({ projects: z.array(project), next_cursor: nullable(text) }) },
  'POST /api/v1/projects': { status: 201, data: project },
  'GET /api/v1/projects/{id}': { data: project },
  'PATCH /api/v1/projects/{id}': { data: project },
  'GET /api/v1/projects/{id}/deployments': { data: deploymentPage },
  'GET /api/v1/projects/{id}/deployments/{deployment_id}': { data: deploymentDetail },
  'GET /api/v1/projects/{id}/deployments/{deployment_id}/log': { data: buildLogPageSchema },
  'GET /api/v1/projects/{id}/screenshot': { data: z.object({ screenshot: nullable(screenshot) }) },
  'GET /api/v1/projects/{id}/analytics': { data: analytics },
  'GET /api/v1/projects/{id}/env': { data: z.object({ variables: z.array(envVariable) }) },
  'POST /api/v1/projects/{id}/env/bulk': { data: envImport },
  'GET /api/v1/notices': { data: notices },
  'GET /api/v1/projects/{id}/functions': {
    data: z.object({ functions: z.array(fn), functions_beta_enrolled: z.boolean() }).meta({ id: 'FunctionsList' }),
  },
  'GET /api/v1/projects/{id}/functions/{name}/invocations': { data: z.object({ invocations: z.array(invocationSummary) }) },
  'GET /api/v1/projects/{id}/functions/{name}/invocations/{invocation_id}': { data: invocation },
  'GET /api/v1/admin/abuse-scans': {
    data: z.object({ page: z.number(), page_size: z.number(), total: z.number(), scans: z.array(abuseScan) }),
  },
  'GET /api/v1/admin/deletions': { data: z.object({ deletions: z.array(pendingDeletion) }) },
  'GET /api/v1/projects/{id}/domains': { data: z.object({ domains: z.array(domain) }) },
  'POST /api/v1/projects/{id}/domains': { status: 201, data: domain },
  'GET /api/v1/domains/{id}': { data: domain },
  'PATCH /api/v1/domains/{id}/geo-filter': { data: domain },
  'POST /api/v1/uploads': { status: 201, data: uploadSession },
  'POST /api/v1/projects/{id}/uploads': { status: 201, data: uploadSession },
  'POST /api/v1/uploads/{upload_id}/finalize': { data: finalized },
};

/**
 * What the code returns (Actual) fits what the schema documents (Doc) and has no top-level field the
 * schema lacks; `tsc` fails where it does not.
 */
type Fits<Doc, Actual extends Doc & { [K in Exclude<keyof Actual, keyof Doc>]: never }> = Actual;
type Doc<S extends z.ZodType> = z.output<S>;
type Returned<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

export type ResponsesFitTheCode = [
  Fits<Doc<typeof project>, Project>,
  Fits<Doc<typeof deploymentPage>, Returned<typeof listDeployments>>,
  Fits<Doc<typeof deploymentDetail>, DeploymentDetail>,
  Fits<Doc<typeof me>, Returned<typeof meView>>,
  Fits<Doc<typeof myTeam>, Returned<typeof teamsOfUser>[number]>,
  Fits<Doc<typeof myInvitation>, Returned<typeof pendingInvitationsOf>[number]>,
  Fits<Doc<typeof invitation>, ReturnType<typeof invitationView>>,
  Fits<Doc<typeof member>, Returned<typeof teamMembers>[number]>,
  Fits<Doc<typeof apiKey>, ApiKeySummary>,
  Fits<Doc<typeof discovery>, IdentityProviderDiscovery>,
  Fits<Doc<typeof analytics>, ProjectAnalytics & { analytics_enabled: boolean }>,
  Fits<Doc<typeof envVariable>, EnvVariableRecord>,
  Fits<Doc<typeof envRejection>, ParsedEnvContent['rejected'][number]>,
  Fits<Doc<typeof notices>, Returned<typeof listVisibleNotices>>,
  Fits<Doc<typeof fn>, ScheduledFunctionView>,
  Fits<Doc<typeof abuseScan>, Returned<typeof listAbuseScans>['scans'][number]>,
  Fits<Doc<typeof pendingDeletion>, PendingDeletion>,
  Fits<Doc<typeof domain>, Domain>,
  Fits<Doc<typeof uploadSession>, UploadSessionView>,
  Fits<Doc<typeof finalized>, FinalizeResult>,
  Fits<Doc<typeof buildLogPageSchema>, Returned<typeof buildLogPage>>,
  Fits<Doc<typeof screenshot>, ProjectScreenshot>,
  Fits<Doc<typeof invocationSummary>, InvocationListRow>,
  Fits<Doc<typeof invocation>, MemberInvocationView>,
];

/**
 * The one error catalogue. Every error the API answers with is an entry here:
 * a stable `code`, its HTTP status and its default sentence. Codes the spec
 * names are written exactly as the spec writes them; the others are ours and
 * documented in docs/api-errors.md.
 *
 * One export per entry, so that a handler's bundle holds the sentences it can
 * answer and not the whole catalogue (it was 15 KB of every API bundle).
 * lib/errors/all.ts lists them all for the docs and the OpenAPI document.
 */
// Generic request errors
export const ROUTE_NOT_FOUND = { code: 'ROUTE_NOT_FOUND', status: 404, message: 'No route matches this path.' } as const;
export const METHOD_NOT_ALLOWED = { code: 'METHOD_NOT_ALLOWED', status: 405, message: 'This method is not allowed on this path.' } as const;
export const INVALID_JSON = { code: 'INVALID_JSON', status: 400, message: 'The request body is not valid JSON.' } as const;
export const UNSUPPORTED_MEDIA_TYPE = {
  code: 'UNSUPPORTED_MEDIA_TYPE',
  status: 415,
  message: 'The request body must be application/json.',
} as const;
export const PAYLOAD_TOO_LARGE = { code: 'PAYLOAD_TOO_LARGE', status: 413, message: 'The request body is too large.' } as const;
export const VALIDATION_FAILED = { code: 'VALIDATION_FAILED', status: 400, message: 'The request is invalid.' } as const;
export const NOT_FOUND = { code: 'NOT_FOUND', status: 404, message: 'Not found.' } as const;
export const CONFLICT = { code: 'CONFLICT', status: 409, message: 'The request conflicts with the current state.' } as const;
export const RATE_LIMITED = { code: 'RATE_LIMITED', status: 429, message: 'Too many requests. Try again later.' } as const;
export const INTERNAL_ERROR = {
  code: 'INTERNAL_ERROR',
  status: 500,
  message: 'Something went wrong on our side. Try again later.',
} as const;
export const SERVICE_UNAVAILABLE = {
  code: 'SERVICE_UNAVAILABLE',
  status: 503,
  message: 'The service is temporarily unavailable. Try again later.',
} as const;
export const PLATFORM_STARTING = {
  code: 'PLATFORM_STARTING',
  status: 503,
  message: 'The platform is starting. Try again after the time in Retry-After.',
} as const;

// Authentication and authorization
export const UNAUTHENTICATED = { code: 'UNAUTHENTICATED', status: 401, message: 'Missing or invalid credentials.' } as const;
export const FORBIDDEN = { code: 'FORBIDDEN', status: 403, message: 'You do not have permission to do this.' } as const;
export const SESSION_REQUIRED = {
  code: 'SESSION_REQUIRED',
  status: 403,
  message: 'This action needs a signed-in user; API keys are refused.',
} as const;
export const PLATFORM_ADMIN_REQUIRED = {
  code: 'PLATFORM_ADMIN_REQUIRED',
  status: 403,
  message: 'This action is for platform administrators.',
} as const;
export const NO_CURRENT_TEAM = {
  code: 'NO_CURRENT_TEAM',
  status: 400,
  message: 'No team selected: send X-Team-Id or set a default team.',
} as const;
export const CROSS_SITE_REQUEST_REFUSED = {
  code: 'CROSS_SITE_REQUEST_REFUSED',
  status: 403,
  message: "This request came from another site. Changes signed in with the console's cookie are taken only from the console itself.",
} as const;
export const SIGN_IN_LINK_LIMITED = {
  code: 'SIGN_IN_LINK_LIMITED',
  status: 429,
  message: 'Too many sign-in links requested. Try again after the time in Retry-After.',
} as const;
export const SIGN_IN_LINK_INVALID = {
  code: 'SIGN_IN_LINK_INVALID',
  status: 400,
  message: 'This sign-in link is invalid, expired or already used. Ask for a new one.',
} as const;

// The console's team administration: members, invitations, API keys
export const MEMBER_IS_OWNER = {
  code: 'MEMBER_IS_OWNER',
  status: 409,
  message: "The team's owner cannot be changed or removed here; transfer ownership first.",
} as const;
export const INVITATION_NOT_FOUND = { code: 'INVITATION_NOT_FOUND', status: 404, message: 'Invitation not found.' } as const;
export const INVITATION_NOT_PENDING = {
  code: 'INVITATION_NOT_PENDING',
  status: 409,
  message: 'This invitation was already accepted, revoked or has expired.',
} as const;
export const INVITATION_PENDING = {
  code: 'INVITATION_PENDING',
  status: 409,
  message: 'This address already has a pending invitation to the team.',
} as const;
export const ALREADY_A_MEMBER = { code: 'ALREADY_A_MEMBER', status: 409, message: 'This person is already a member of the team.' } as const;
export const API_KEY_NOT_FOUND = { code: 'API_KEY_NOT_FOUND', status: 404, message: 'API key not found in this team.' } as const;

// Teams
export const TEAM_NOT_FOUND = { code: 'TEAM_NOT_FOUND', status: 404, message: 'Team not found.' } as const;
export const TEAM_SLUG_INVALID = {
  code: 'TEAM_SLUG_INVALID',
  status: 400,
  message: 'A team slug is 3 to 48 lowercase letters, digits and hyphens, starting and ending with a letter or digit.',
} as const;
export const TEAM_SLUG_RESERVED = { code: 'TEAM_SLUG_RESERVED', status: 400, message: 'This team slug is reserved.' } as const;
export const TEAM_SLUG_TAKEN = { code: 'TEAM_SLUG_TAKEN', status: 409, message: 'This team slug is taken.' } as const;

// Accounts: ownership transfer, notices, e-mail confirmation, personal data export
export const OWNERSHIP_TRANSFER_TO_SELF = {
  code: 'OWNERSHIP_TRANSFER_TO_SELF',
  status: 400,
  message: 'You already own this team; name another member as the new owner.',
} as const;
export const MEMBER_NOT_FOUND = { code: 'MEMBER_NOT_FOUND', status: 404, message: 'No such member in this team.' } as const;
export const OWNERSHIP_TRANSFER_CONFLICT = {
  code: 'OWNERSHIP_TRANSFER_CONFLICT',
  status: 409,
  message: 'Team ownership changed while this request ran. Reload the member list and try again.',
} as const;
export const NOTICE_NOT_FOUND = { code: 'NOTICE_NOT_FOUND', status: 404, message: 'Notice not found.' } as const;
export const NOTICE_SEEN_AT_IN_FUTURE = {
  code: 'NOTICE_SEEN_AT_IN_FUTURE',
  status: 400,
  message: 'seen_at is more than five minutes in the future.',
} as const;
export const EMAIL_RESEND_LIMITED = {
  code: 'EMAIL_RESEND_LIMITED',
  status: 429,
  message: 'Too many confirmation e-mails requested. Try again later.',
} as const;
export const EMAIL_DELIVERY_UNAVAILABLE = {
  code: 'EMAIL_DELIVERY_UNAVAILABLE',
  status: 503,
  message: 'E-mail delivery is temporarily unavailable. Try again later.',
} as const;
export const EMAIL_CONFIRMATION_INVALID = {
  code: 'EMAIL_CONFIRMATION_INVALID',
  status: 400,
  message: 'This confirmation link is invalid, expired or already used.',
} as const;

// Integrations: Git hosting connect, SSO discovery, environment variables
export const TEAM_ID_INVALID = {
  code: 'TEAM_ID_INVALID',
  status: 400,
  message: 'Query parameter team_id is required and must be a team UUID.',
} as const;
// The spec asks "a validation response" for the five SSO discover codes: 422, the body parsed but its issuer cannot be used.
export const INVALID_INPUT = {
  code: 'INVALID_INPUT',
  status: 422,
  message: 'issuer is required: the https address of your identity provider.',
} as const;
export const SSO_ISSUER_INVALID = { code: 'SSO_ISSUER_INVALID', status: 422, message: 'This issuer address cannot be used.' } as const;
export const SSO_ISSUER_UNREACHABLE = {
  code: 'SSO_ISSUER_UNREACHABLE',
  status: 422,
  message: "The issuer's discovery document could not be fetched.",
} as const;
export const SSO_ISSUER_MISMATCH = {
  code: 'SSO_ISSUER_MISMATCH',
  status: 422,
  message: 'The discovery document reports a different issuer than the address entered.',
} as const;
export const SSO_DISCOVERY_INCOMPLETE = {
  code: 'SSO_DISCOVERY_INCOMPLETE',
  status: 422,
  message: 'The discovery document lacks endpoints single sign-on needs.',
} as const;
export const ENV_NAME_INVALID = {
  code: 'ENV_NAME_INVALID',
  status: 400,
  message: 'A variable name is letters, digits and underscores, not starting with a digit, at most 256 characters.',
} as const;
export const ENV_NAME_RESERVED = {
  code: 'ENV_NAME_RESERVED',
  status: 400,
  message: 'This variable name is reserved by the platform.',
} as const;
export const ENV_VALUE_TOO_LARGE = {
  code: 'ENV_VALUE_TOO_LARGE',
  status: 400,
  message: 'A variable value is at most 65536 bytes.',
} as const;
export const ENV_IMPORT_TOO_MANY = { code: 'ENV_IMPORT_TOO_MANY', status: 400, message: 'An import holds at most 500 variables.' } as const;
export const ENV_IMPORT_EMPTY = { code: 'ENV_IMPORT_EMPTY', status: 422, message: 'The content has no valid NAME=value line.' } as const;

// Sites: projects, uploads, deployments (docs/sites.md)
export const PLAN_LIMIT_EXCEEDED = { code: 'PLAN_LIMIT_EXCEEDED', status: 403, message: "This would go over your plan's limits." } as const;
export const TEAM_SUSPENDED = {
  code: 'TEAM_SUSPENDED',
  status: 403,
  message: 'This team is suspended; it cannot publish. Contact support.',
} as const;
export const TOO_MANY_UPLOAD_SESSIONS = {
  code: 'TOO_MANY_UPLOAD_SESSIONS',
  status: 429,
  message: 'Too many upload sessions are open for this team. Finish or let one expire, then try again.',
} as const;
export const SUBDOMAIN_TAKEN = { code: 'SUBDOMAIN_TAKEN', status: 409, message: 'This subdomain is taken.' } as const;
export const SUBDOMAIN_INVALID = {
  code: 'SUBDOMAIN_INVALID',
  status: 400,
  message: 'A subdomain is 3 to 63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit.',
} as const;
export const SUBDOMAIN_RESERVED = { code: 'SUBDOMAIN_RESERVED', status: 400, message: 'This subdomain is reserved.' } as const;
export const FUNCTION_HOSTNAME_TAKEN = {
  code: 'FUNCTION_HOSTNAME_TAKEN',
  status: 409,
  message: "On this subdomain a function's hostname {name}-{subdomain} would be one another project holds; details.labels names them.",
} as const;
export const FUNCTION_HOSTNAME_TOO_LONG = {
  code: 'FUNCTION_HOSTNAME_TOO_LONG',
  status: 400,
  message: "On this subdomain a function's hostname label {name}-{subdomain} would be over 63 characters; details.labels names them.",
} as const;
export const SUBDOMAIN_CHANGE_TOO_MANY_FUNCTIONS = {
  code: 'SUBDOMAIN_CHANGE_TOO_MANY_FUNCTIONS',
  status: 409,
  message: 'This project has more function names than a subdomain change moves at once; details.max says how many.',
} as const;
export const PROJECT_NAME_TAKEN = {
  code: 'PROJECT_NAME_TAKEN',
  status: 409,
  message: 'Your team already has a project with this name.',
} as const;
export const INVALID_MANIFEST = { code: 'INVALID_MANIFEST', status: 400, message: 'The file manifest is invalid.' } as const;
export const UPLOAD_SITE_IN_SUBFOLDER = {
  code: 'UPLOAD_SITE_IN_SUBFOLDER',
  status: 422,
  message: 'This upload is not a publishable site: its index.html sits in a subfolder. Upload that folder instead.',
} as const;
export const UPLOAD_SOURCE_CODE = {
  code: 'UPLOAD_SOURCE_CODE',
  status: 422,
  message: 'This upload looks like source code, not a built site. Build it and upload the output folder.',
} as const;
export const UPLOAD_PHP_SITE = {
  code: 'UPLOAD_PHP_SITE',
  status: 422,
  message: 'This upload is a PHP site; only static sites can be published.',
} as const;
export const IDEMPOTENCY_KEY_INVALID = {
  code: 'IDEMPOTENCY_KEY_INVALID',
  status: 400,
  message: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
} as const;
export const IDEMPOTENCY_KEY_REUSED = {
  code: 'IDEMPOTENCY_KEY_REUSED',
  status: 422,
  message: 'This Idempotency-Key was already used with a different request body.',
} as const;
export const IDEMPOTENCY_KEY_IN_PROGRESS = {
  code: 'IDEMPOTENCY_KEY_IN_PROGRESS',
  status: 409,
  message: 'A request with this Idempotency-Key is still being processed. Retry shortly.',
} as const;
export const PROJECT_NOT_FOUND = { code: 'PROJECT_NOT_FOUND', status: 404, message: 'Project not found.' } as const;
export const PROJECT_ID_INVALID = {
  code: 'PROJECT_ID_INVALID',
  status: 400,
  message: 'The project id in the path must be a project UUID.',
} as const;
export const PROJECT_SLUG_IMMUTABLE = {
  code: 'PROJECT_SLUG_IMMUTABLE',
  status: 400,
  message: 'A project slug cannot be changed: it is the storage key of every deployment.',
} as const;
export const PROJECT_EXPIRED = {
  code: 'PROJECT_EXPIRED',
  status: 409,
  message: 'This provisional project expired before anything was published. Begin a new upload.',
} as const;
export const UPLOAD_NOT_FOUND = { code: 'UPLOAD_NOT_FOUND', status: 404, message: 'Upload session not found.' } as const;
export const UPLOAD_SESSION_EXPIRED = {
  code: 'UPLOAD_SESSION_EXPIRED',
  status: 409,
  message: 'This upload session has expired. Open a new one.',
} as const;
export const UPLOAD_SESSION_FINALIZED = {
  code: 'UPLOAD_SESSION_FINALIZED',
  status: 409,
  message: 'This upload session is already finalized. Open a new one to upload more files.',
} as const;
export const UPLOAD_HASH_NOT_IN_MANIFEST = {
  code: 'UPLOAD_HASH_NOT_IN_MANIFEST',
  status: 400,
  message: "This hash is not in the upload session's manifest.",
} as const;
export const SCREENSHOT_MEDIA_TYPE_UNSUPPORTED = {
  code: 'SCREENSHOT_MEDIA_TYPE_UNSUPPORTED',
  status: 415,
  message: 'A capture result is image/png or application/json.',
} as const;
export const SCREENSHOT_IMAGE_INVALID = {
  code: 'SCREENSHOT_IMAGE_INVALID',
  status: 422,
  message: 'The image is not a valid PNG.',
} as const;
export const SCREENSHOT_IMAGE_DIMENSIONS = {
  code: 'SCREENSHOT_IMAGE_DIMENSIONS',
  status: 422,
  message: 'The image must be between 64x64 and 2560x4096 pixels.',
} as const;
export const SCREENSHOT_JOB_FINISHED = {
  code: 'SCREENSHOT_JOB_FINISHED',
  status: 409,
  message: 'This capture job already has its result.',
} as const;
export const UPLOAD_CONTENT_MISMATCH = {
  code: 'UPLOAD_CONTENT_MISMATCH',
  status: 422,
  message: 'The uploaded bytes do not match the hash and size in the manifest.',
} as const;
export const UPLOAD_BATCH_INVALID = {
  code: 'UPLOAD_BATCH_INVALID',
  status: 400,
  message: 'The batch is not a multipart/form-data body of at most 100 files, each a file part named by its hash.',
} as const;
export const UPLOAD_FILE_NOT_SENT = {
  code: 'UPLOAD_FILE_NOT_SENT',
  status: 409,
  message: "Nothing has been sent to this file's upload URL yet.",
} as const;
export const UPLOAD_INCOMPLETE = {
  code: 'UPLOAD_INCOMPLETE',
  status: 409,
  message: 'Some files of the manifest have not been uploaded yet.',
} as const;
export const DEPLOYMENT_NOT_FOUND = {
  code: 'DEPLOYMENT_NOT_FOUND',
  status: 404,
  message: 'Deployment not found in this project.',
} as const;
export const DEPLOYMENT_NOT_READY = {
  code: 'DEPLOYMENT_NOT_READY',
  status: 400,
  message: 'Only a ready deployment can be promoted.',
} as const;
export const PUBLISH_IN_PROGRESS = {
  code: 'PUBLISH_IN_PROGRESS',
  status: 503,
  message: 'The deployment is still being published. Call finalize again to continue.',
} as const;
export const FUNCTIONS_BUILD_FAILED = {
  code: 'FUNCTIONS_BUILD_FAILED',
  status: 422,
  message: 'The functions build failed, so nothing was published; details.build_log says why. Fix it and deploy again.',
} as const;

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

// Functions, HTTPS door ({name}-{subdomain}.{function_domain}); no handler error text ever reaches the caller
export const FUNCTION_NOT_FOUND = { code: 'FUNCTION_NOT_FOUND', status: 404, message: 'No function answers at this address.' } as const;
export const FUNCTION_BODY_TOO_LARGE = {
  code: 'FUNCTION_BODY_TOO_LARGE',
  status: 413,
  message: 'The request body is over 10 MiB, the limit of a function request.',
} as const;
export const FUNCTION_FAILED = { code: 'FUNCTION_FAILED', status: 500, message: 'The function failed to answer this request.' } as const;
export const FUNCTION_START_FAILED = {
  code: 'FUNCTION_START_FAILED',
  status: 500,
  message: 'The function could not be started. This is a platform issue; please retry.',
} as const;
export const FUNCTION_TIMEOUT = {
  code: 'FUNCTION_TIMEOUT',
  status: 504,
  message: 'The function did not answer within its time budget.',
} as const;

// Trust and safety: abuse reports (spec endpoint 3, docs/trust-and-safety.md)
export const ABUSE_REPORT_INVALID = {
  code: 'ABUSE_REPORT_INVALID',
  status: 400,
  message: 'The abuse report is incomplete or invalid; details.fields lists what to fix.',
} as const;
export const ABUSE_REPORT_URL_NOT_HOSTED = {
  code: 'ABUSE_REPORT_URL_NOT_HOSTED',
  status: 422,
  message: 'Every reported URL must be an http(s) address on a site or function this platform hosts; details.urls lists the others.',
} as const;
export const ABUSE_REPORT_RATE_LIMITED = {
  code: 'ABUSE_REPORT_RATE_LIMITED',
  status: 429,
  message: 'Too many abuse reports. Try again after the time in Retry-After.',
} as const;
export const ABUSE_REPORT_NOT_RECORDED = {
  code: 'ABUSE_REPORT_NOT_RECORDED',
  status: 503,
  message: 'The abuse report could not be recorded. Nothing was kept; please send it again later.',
} as const;
export const ABUSE_INTAKE_UNAVAILABLE = {
  code: 'ABUSE_INTAKE_UNAVAILABLE',
  status: 503,
  message: 'Abuse reports cannot be taken here right now. Try again later.',
} as const;

// Administration (platform administrators)
export const ADMIN_TEAM_ID_INVALID = {
  code: 'ADMIN_TEAM_ID_INVALID',
  status: 400,
  message: 'The team id in the path must be a team UUID.',
} as const;
export const FAILED_WEBHOOK_EVENT_ID_INVALID = {
  code: 'FAILED_WEBHOOK_EVENT_ID_INVALID',
  status: 400,
  message: 'The failed webhook event id in the path must be a UUID.',
} as const;
export const FAILED_WEBHOOK_EVENT_NOT_FOUND = {
  code: 'FAILED_WEBHOOK_EVENT_NOT_FOUND',
  status: 404,
  message: 'No failed webhook event has this id (it may have been retried or dismissed).',
} as const;
export const FAILED_WEBHOOK_EVENT_NOT_RETRYABLE = {
  code: 'FAILED_WEBHOOK_EVENT_NOT_RETRYABLE',
  status: 409,
  message:
    'This event was recorded without its payload (too large to keep, or from before payloads were kept); ' +
    "resend it from the provider's dashboard.",
} as const;
export const ABUSE_SCAN_NOT_FOUND = { code: 'ABUSE_SCAN_NOT_FOUND', status: 404, message: 'No finished abuse scan has this id.' } as const;
export const ABUSE_SCAN_ALREADY_REVIEWED = {
  code: 'ABUSE_SCAN_ALREADY_REVIEWED',
  status: 409,
  message: 'This abuse scan was already reviewed; details.review_status says how.',
} as const;
export const ABUSE_SCAN_SUPERSEDED = {
  code: 'ABUSE_SCAN_SUPERSEDED',
  status: 409,
  message: 'A later scan of this project and branch replaced this one; review that one (details.latest_scan_id).',
} as const;
export const SUBSCRIPTION_CHANGED = {
  code: 'SUBSCRIPTION_CHANGED',
  status: 409,
  message: "The team's subscription kept changing while this request ran. Read it again and retry.",
} as const;
export const FEEDBACK_NOT_FOUND = { code: 'FEEDBACK_NOT_FOUND', status: 404, message: 'Feedback not found.' } as const;

// Feedback from signed-in users (docs/attention.md)
export const FEEDBACK_RATE_LIMITED = {
  code: 'FEEDBACK_RATE_LIMITED',
  status: 429,
  message: 'Too much feedback sent this hour. Try again after the time in Retry-After.',
} as const;

// The billing provider's webhook (POST /api/v1/webhooks/billing, docs/attention.md)
export const WEBHOOK_SIGNATURE_INVALID = {
  code: 'WEBHOOK_SIGNATURE_INVALID',
  status: 400,
  message: 'The Stripe-Signature header is missing, malformed, too old or matches no signature of this body; details.reason says which.',
} as const;
export const WEBHOOK_PAYLOAD_INVALID = {
  code: 'WEBHOOK_PAYLOAD_INVALID',
  status: 400,
  message: 'The signed body is not a JSON event with an id and a type.',
} as const;
export const WEBHOOK_EVENT_NOT_PROCESSED = {
  code: 'WEBHOOK_EVENT_NOT_PROCESSED',
  status: 503,
  message: 'The event could not be processed on our side and was recorded; deliver it again later.',
} as const;

// Builds: Git webhooks, manual builds, the breaker, build logs (docs/builds.md)
export const GIT_WEBHOOK_SIGNATURE_INVALID = {
  code: 'GIT_WEBHOOK_SIGNATURE_INVALID',
  status: 401,
  message:
    "The delivery's signature (X-Hub-Signature-256) or token (X-Gitlab-Token) is missing or matches the webhook secret of no project connected to this repository.",
} as const;
export const GIT_WEBHOOK_PAYLOAD_INVALID = {
  code: 'GIT_WEBHOOK_PAYLOAD_INVALID',
  status: 400,
  message: 'The body is not a JSON event of this type with a repository.',
} as const;
export const GIT_WEBHOOK_HEADERS_MISSING = {
  code: 'GIT_WEBHOOK_HEADERS_MISSING',
  status: 400,
  message: 'The event type and delivery id headers are required (details.missing names them).',
} as const;
export const GIT_REPOSITORY_NOT_CONNECTED = {
  code: 'GIT_REPOSITORY_NOT_CONNECTED',
  status: 409,
  message: 'The project has no git_repo_url: connect a repository before building.',
} as const;
export const PREVIEW_SLUG_INVALID = {
  code: 'PREVIEW_SLUG_INVALID',
  status: 400,
  message: 'A preview_slug is 3 to 20 lowercase letters and digits.',
} as const;
export const PREVIEW_SLUG_TAKEN = { code: 'PREVIEW_SLUG_TAKEN', status: 409, message: 'This preview_slug is taken.' } as const;
export const BUILD_LOG_CURSOR_INVALID = {
  code: 'BUILD_LOG_CURSOR_INVALID',
  status: 400,
  message: 'cursor must be a line number (a non-negative integer), as next_cursor gives it.',
} as const;

// Functions, queued door (spec endpoint 10)
export const TOO_MANY_CONCURRENT_INVOCATIONS = {
  code: 'TOO_MANY_CONCURRENT_INVOCATIONS',
  status: 429,
  message: 'Too many concurrent invocations',
} as const;
export const INVOCATION_NOT_FOUND = { code: 'INVOCATION_NOT_FOUND', status: 404, message: 'No such invocation of this function.' } as const;

/**
 * The one error catalogue. Every error the API answers with is an entry here:
 * a stable `code`, its HTTP status and its default sentence. Codes the spec
 * names are written exactly as the spec writes them; the others are ours and
 * documented in docs/api-errors.md.
 */
export const errorCatalogue = {
  // Generic request errors
  ROUTE_NOT_FOUND: { status: 404, message: 'No route matches this path.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This method is not allowed on this path.' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be application/json.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  VALIDATION_FAILED: { status: 400, message: 'The request is invalid.' },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  CONFLICT: { status: 409, message: 'The request conflicts with the current state.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests. Try again later.' },
  INTERNAL_ERROR: { status: 500, message: 'Something went wrong on our side. Try again later.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is temporarily unavailable. Try again later.' },
  PLATFORM_STARTING: { status: 503, message: 'The platform is starting. Try again after the time in Retry-After.' },

  // Authentication and authorization
  UNAUTHENTICATED: { status: 401, message: 'Missing or invalid credentials.' },
  FORBIDDEN: { status: 403, message: 'You do not have permission to do this.' },
  SESSION_REQUIRED: { status: 403, message: 'This action needs a signed-in user; API keys are refused.' },
  PLATFORM_ADMIN_REQUIRED: { status: 403, message: 'This action is for platform administrators.' },
  NO_CURRENT_TEAM: { status: 400, message: 'No team selected: send X-Team-Id or set a default team.' },
  CROSS_SITE_REQUEST_REFUSED: {
    status: 403,
    message: "This request came from another site. Changes signed in with the console's cookie are taken only from the console itself.",
  },
  SIGN_IN_LINK_LIMITED: { status: 429, message: 'Too many sign-in links requested. Try again after the time in Retry-After.' },
  SIGN_IN_LINK_INVALID: { status: 400, message: 'This sign-in link is invalid, expired or already used. Ask for a new one.' },

  // The console's team administration: members, invitations, API keys
  MEMBER_IS_OWNER: { status: 409, message: "The team's owner cannot be changed or removed here; transfer ownership first." },
  INVITATION_NOT_FOUND: { status: 404, message: 'Invitation not found.' },
  INVITATION_NOT_PENDING: { status: 409, message: 'This invitation was already accepted, revoked or has expired.' },
  INVITATION_PENDING: { status: 409, message: 'This address already has a pending invitation to the team.' },
  ALREADY_A_MEMBER: { status: 409, message: 'This person is already a member of the team.' },
  API_KEY_NOT_FOUND: { status: 404, message: 'API key not found in this team.' },

  // Teams
  TEAM_NOT_FOUND: { status: 404, message: 'Team not found.' },
  TEAM_SLUG_INVALID: {
    status: 400,
    message: 'A team slug is 3 to 48 lowercase letters, digits and hyphens, starting and ending with a letter or digit.',
  },
  TEAM_SLUG_RESERVED: { status: 400, message: 'This team slug is reserved.' },
  TEAM_SLUG_TAKEN: { status: 409, message: 'This team slug is taken.' },

  // Accounts: ownership transfer, notices, e-mail confirmation, personal data export
  OWNERSHIP_TRANSFER_TO_SELF: { status: 400, message: 'You already own this team; name another member as the new owner.' },
  MEMBER_NOT_FOUND: { status: 404, message: 'No such member in this team.' },
  OWNERSHIP_TRANSFER_CONFLICT: {
    status: 409,
    message: 'Team ownership changed while this request ran. Reload the member list and try again.',
  },
  NOTICE_NOT_FOUND: { status: 404, message: 'Notice not found.' },
  NOTICE_SEEN_AT_IN_FUTURE: { status: 400, message: 'seen_at is more than five minutes in the future.' },
  EMAIL_RESEND_LIMITED: { status: 429, message: 'Too many confirmation e-mails requested. Try again later.' },
  EMAIL_DELIVERY_UNAVAILABLE: { status: 503, message: 'E-mail delivery is temporarily unavailable. Try again later.' },
  EMAIL_CONFIRMATION_INVALID: { status: 400, message: 'This confirmation link is invalid, expired or already used.' },

  // Integrations: Git hosting connect, SSO discovery, environment variables
  TEAM_ID_INVALID: { status: 400, message: 'Query parameter team_id is required and must be a team UUID.' },
  // The spec asks "a validation response" for the five SSO discover codes: 422, the body parsed but its issuer cannot be used.
  INVALID_INPUT: { status: 422, message: 'issuer is required: the https address of your identity provider.' },
  SSO_ISSUER_INVALID: { status: 422, message: 'This issuer address cannot be used.' },
  SSO_ISSUER_UNREACHABLE: { status: 422, message: "The issuer's discovery document could not be fetched." },
  SSO_ISSUER_MISMATCH: { status: 422, message: 'The discovery document reports a different issuer than the address entered.' },
  SSO_DISCOVERY_INCOMPLETE: { status: 422, message: 'The discovery document lacks endpoints single sign-on needs.' },
  ENV_NAME_INVALID: {
    status: 400,
    message: 'A variable name is letters, digits and underscores, not starting with a digit, at most 256 characters.',
  },
  ENV_NAME_RESERVED: { status: 400, message: 'This variable name is reserved by the platform.' },
  ENV_VALUE_TOO_LARGE: { status: 400, message: 'A variable value is at most 65536 bytes.' },
  ENV_IMPORT_TOO_MANY: { status: 400, message: 'An import holds at most 500 variables.' },
  ENV_IMPORT_EMPTY: { status: 422, message: 'The content has no valid NAME=value line.' },

  // Sites: projects, uploads, deployments (docs/sites.md)
  PLAN_LIMIT_EXCEEDED: { status: 403, message: "This would go over your plan's limits." },
  TEAM_SUSPENDED: { status: 403, message: 'This team is suspended; it cannot publish. Contact support.' },
  TOO_MANY_UPLOAD_SESSIONS: { status: 429, message: 'Too many upload sessions are open for this team. Finish or let one expire, then try again.' },
  SUBDOMAIN_TAKEN: { status: 409, message: 'This subdomain is taken.' },
  SUBDOMAIN_INVALID: {
    status: 400,
    message: 'A subdomain is 3 to 63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit.',
  },
  SUBDOMAIN_RESERVED: { status: 400, message: 'This subdomain is reserved.' },
  FUNCTION_HOSTNAME_TAKEN: {
    status: 409,
    message: "On this subdomain a function's hostname {name}-{subdomain} would be one another project holds; details.labels names them.",
  },
  FUNCTION_HOSTNAME_TOO_LONG: {
    status: 400,
    message: "On this subdomain a function's hostname label {name}-{subdomain} would be over 63 characters; details.labels names them.",
  },
  SUBDOMAIN_CHANGE_TOO_MANY_FUNCTIONS: {
    status: 409,
    message: 'This project has more function names than a subdomain change moves at once; details.max says how many.',
  },
  PROJECT_NAME_TAKEN: { status: 409, message: 'Your team already has a project with this name.' },
  INVALID_MANIFEST: { status: 400, message: 'The file manifest is invalid.' },
  UPLOAD_SITE_IN_SUBFOLDER: {
    status: 422,
    message: 'This upload is not a publishable site: its index.html sits in a subfolder. Upload that folder instead.',
  },
  UPLOAD_SOURCE_CODE: {
    status: 422,
    message: 'This upload looks like source code, not a built site. Build it and upload the output folder.',
  },
  UPLOAD_PHP_SITE: { status: 422, message: 'This upload is a PHP site; only static sites can be published.' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, message: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'This Idempotency-Key was already used with a different request body.' },
  IDEMPOTENCY_KEY_IN_PROGRESS: { status: 409, message: 'A request with this Idempotency-Key is still being processed. Retry shortly.' },
  PROJECT_NOT_FOUND: { status: 404, message: 'Project not found.' },
  PROJECT_ID_INVALID: { status: 400, message: 'The project id in the path must be a project UUID.' },
  PROJECT_SLUG_IMMUTABLE: { status: 400, message: 'A project slug cannot be changed: it is the storage key of every deployment.' },
  PROJECT_EXPIRED: { status: 409, message: 'This provisional project expired before anything was published. Begin a new upload.' },
  UPLOAD_NOT_FOUND: { status: 404, message: 'Upload session not found.' },
  UPLOAD_SESSION_EXPIRED: { status: 409, message: 'This upload session has expired. Open a new one.' },
  UPLOAD_SESSION_FINALIZED: { status: 409, message: 'This upload session is already finalized. Open a new one to upload more files.' },
  UPLOAD_HASH_NOT_IN_MANIFEST: { status: 400, message: "This hash is not in the upload session's manifest." },
  SCREENSHOT_MEDIA_TYPE_UNSUPPORTED: { status: 415, message: 'A capture result is image/png or application/json.' },
  SCREENSHOT_IMAGE_INVALID: { status: 422, message: 'The image is not a valid PNG.' },
  SCREENSHOT_IMAGE_DIMENSIONS: { status: 422, message: 'The image must be between 64x64 and 2560x4096 pixels.' },
  SCREENSHOT_JOB_FINISHED: { status: 409, message: 'This capture job already has its result.' },
  UPLOAD_CONTENT_MISMATCH: { status: 422, message: 'The uploaded bytes do not match the hash and size in the manifest.' },
  UPLOAD_BATCH_INVALID: {
    status: 400,
    message: 'The batch is not a multipart/form-data body of at most 100 files, each a file part named by its hash.',
  },
  UPLOAD_FILE_NOT_SENT: { status: 409, message: "Nothing has been sent to this file's upload URL yet." },
  UPLOAD_INCOMPLETE: { status: 409, message: 'Some files of the manifest have not been uploaded yet.' },
  DEPLOYMENT_NOT_FOUND: { status: 404, message: 'Deployment not found in this project.' },
  DEPLOYMENT_NOT_READY: { status: 400, message: 'Only a ready deployment can be promoted.' },
  PUBLISH_IN_PROGRESS: { status: 503, message: 'The deployment is still being published. Call finalize again to continue.' },
  FUNCTIONS_BUILD_FAILED: {
    status: 422,
    message: 'The functions build failed, so nothing was published; details.build_log says why. Fix it and deploy again.',
  },

  // Custom domains (docs/domains.md)
  DOMAIN_NOT_FOUND: { status: 404, message: 'Domain not found.' },
  DOMAIN_INVALID: {
    status: 400,
    message: 'A domain is a hostname under a public suffix, like www.example.com: letters, digits and hyphens in labels of at most 63 characters.',
  },
  DOMAIN_RESERVED: { status: 400, message: "Hostnames under the platform's own site and function domains cannot be added as custom domains." },
  DOMAIN_TAKEN: { status: 409, message: 'This hostname is already connected to a project.' },
  DOMAIN_CHANGED: { status: 409, message: 'The domain changed while this request ran. Read it again and retry.' },
  // The project's primary domain (PATCH /api/v1/projects/{id}, primary_domain_id; docs/domains.md#serving)
  PRIMARY_DOMAIN_NOT_IN_PROJECT: { status: 400, message: 'primary_domain_id must be the id of a domain of this project.' },
  PRIMARY_DOMAIN_NOT_VERIFIED: { status: 409, message: 'Only a verified domain can be the primary domain. Verify it first.' },
  PRIMARY_DOMAIN_REMOVED: { status: 409, message: 'This domain has been removed from the project, so it cannot be the primary domain.' },
  DOMAIN_NOT_VERIFIED: { status: 400, message: 'The domain is not verified yet: verify it before asking for its certificate.' },
  SSL_ALREADY_ISSUED: { status: 400, message: 'This domain already has its SSL certificate.' },
  DNS_ZONE_UNAVAILABLE: { status: 503, message: 'The managed DNS zone could not be created or removed. Try again later.' },
  DNS_LOOKUP_UNAVAILABLE: {
    status: 503,
    message: "The platform's DNS resolver did not answer, so nothing was checked and nothing changed. Try again later.",
  },
  // Geo rules (spec endpoint 12): the spec names these conditions only, so the codes and statuses are ours.
  GEO_COUNTRY_INVALID: {
    status: 400,
    message: 'geo_countries must be ISO 3166-1 alpha-2 country codes, like DE or US; details.invalid lists the others.',
  },
  GEO_COUNTRIES_REQUIRED: { status: 400, message: 'geo_countries must name at least one country unless geo_mode is off.' },
  DOMAIN_NOT_ON_DEDICATED_ZONE: {
    status: 409,
    message: 'Geo rules need the domain on its own pull zone, which it gets once verified and its certificate is set up.',
  },
  // Not a failure: the policy is saved (details.domain) and the platform keeps applying it; 202, accepted and not yet done.
  GEO_POLICY_NOT_APPLIED: {
    status: 202,
    message: 'The geo policy is saved but the CDN did not take it yet; it is applied automatically when the CDN answers.',
  },

  // Functions, HTTPS door ({name}-{subdomain}.{function_domain}); no handler error text ever reaches the caller
  FUNCTION_NOT_FOUND: { status: 404, message: 'No function answers at this address.' },
  FUNCTION_BODY_TOO_LARGE: { status: 413, message: 'The request body is over 10 MiB, the limit of a function request.' },
  FUNCTION_FAILED: { status: 500, message: 'The function failed to answer this request.' },
  FUNCTION_START_FAILED: { status: 500, message: 'The function could not be started. This is a platform issue; please retry.' },
  FUNCTION_TIMEOUT: { status: 504, message: 'The function did not answer within its time budget.' },

  // Trust and safety: abuse reports (spec endpoint 3, docs/trust-and-safety.md)
  ABUSE_REPORT_INVALID: {
    status: 400,
    message: 'The abuse report is incomplete or invalid; details.fields lists what to fix.',
  },
  ABUSE_REPORT_URL_NOT_HOSTED: {
    status: 422,
    message: 'Every reported URL must be an http(s) address on a site or function this platform hosts; details.urls lists the others.',
  },
  ABUSE_REPORT_RATE_LIMITED: { status: 429, message: 'Too many abuse reports. Try again after the time in Retry-After.' },
  ABUSE_REPORT_NOT_RECORDED: { status: 503, message: 'The abuse report could not be recorded. Nothing was kept; please send it again later.' },
  ABUSE_INTAKE_UNAVAILABLE: { status: 503, message: 'Abuse reports cannot be taken here right now. Try again later.' },

  // Administration (platform administrators)
  ADMIN_TEAM_ID_INVALID: { status: 400, message: 'The team id in the path must be a team UUID.' },
  FAILED_WEBHOOK_EVENT_ID_INVALID: { status: 400, message: 'The failed webhook event id in the path must be a UUID.' },
  FAILED_WEBHOOK_EVENT_NOT_FOUND: { status: 404, message: 'No failed webhook event has this id (it may have been retried or dismissed).' },
  FAILED_WEBHOOK_EVENT_NOT_RETRYABLE: {
    status: 409,
    message:
      'This event was recorded without its payload (too large to keep, or from before payloads were kept); ' +
      "resend it from the provider's dashboard.",
  },
  ABUSE_SCAN_NOT_FOUND: { status: 404, message: 'No finished abuse scan has this id.' },
  ABUSE_SCAN_ALREADY_REVIEWED: { status: 409, message: 'This abuse scan was already reviewed; details.review_status says how.' },
  ABUSE_SCAN_SUPERSEDED: { status: 409, message: 'A later scan of this project and branch replaced this one; review that one (details.latest_scan_id).' },
  SUBSCRIPTION_CHANGED: { status: 409, message: "The team's subscription kept changing while this request ran. Read it again and retry." },
  FEEDBACK_NOT_FOUND: { status: 404, message: 'Feedback not found.' },

  // Feedback from signed-in users (docs/attention.md)
  FEEDBACK_RATE_LIMITED: { status: 429, message: 'Too much feedback sent this hour. Try again after the time in Retry-After.' },

  // The billing provider's webhook (POST /api/v1/webhooks/billing, docs/attention.md)
  WEBHOOK_SIGNATURE_INVALID: {
    status: 400,
    message: 'The Stripe-Signature header is missing, malformed, too old or matches no signature of this body; details.reason says which.',
  },
  WEBHOOK_PAYLOAD_INVALID: { status: 400, message: 'The signed body is not a JSON event with an id and a type.' },
  WEBHOOK_EVENT_NOT_PROCESSED: {
    status: 503,
    message: 'The event could not be processed on our side and was recorded; deliver it again later.',
  },

  // Builds: Git webhooks, manual builds, the breaker, build logs (docs/builds.md)
  GIT_WEBHOOK_SIGNATURE_INVALID: {
    status: 401,
    message: "The delivery's signature (X-Hub-Signature-256) or token (X-Gitlab-Token) is missing or matches the webhook secret of no project connected to this repository.",
  },
  GIT_WEBHOOK_PAYLOAD_INVALID: { status: 400, message: 'The body is not a JSON event of this type with a repository.' },
  GIT_WEBHOOK_HEADERS_MISSING: { status: 400, message: 'The event type and delivery id headers are required (details.missing names them).' },
  GIT_REPOSITORY_NOT_CONNECTED: { status: 409, message: 'The project has no git_repo_url: connect a repository before building.' },
  PREVIEW_SLUG_INVALID: { status: 400, message: 'A preview_slug is 3 to 20 lowercase letters and digits.' },
  PREVIEW_SLUG_TAKEN: { status: 409, message: 'This preview_slug is taken.' },
  BUILD_LOG_CURSOR_INVALID: { status: 400, message: 'cursor must be a line number (a non-negative integer), as next_cursor gives it.' },

  // Functions, queued door (spec endpoint 10)
  TOO_MANY_CONCURRENT_INVOCATIONS: { status: 429, message: 'Too many concurrent invocations' },
  INVOCATION_NOT_FOUND: { status: 404, message: 'No such invocation of this function.' },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

/** The one typed error class; the middleware turns it into the error envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    options: { message?: string; details?: unknown; headers?: Record<string, string> } = {},
  ) {
    const entry = errorCatalogue[code];
    super(options.message ?? entry.message);
    this.name = 'ApiError';
    this.status = entry.status;
    this.code = code;
    this.details = options.details ?? null;
    this.headers = options.headers ?? {};
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

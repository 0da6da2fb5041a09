// Entries of the error catalogue (lib/errors/catalogue.ts). Sites: projects, uploads, deployments (docs/sites.md).

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
  message: 'This Idempotency-Key was already used with a different request. Send a new key for a new request.',
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

// Entries of the error catalogue (lib/errors/catalogue.ts). Builds (docs/builds.md).

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
export const FORGE_AUDIENCE_TAKEN = {
  code: 'FORGE_AUDIENCE_TAKEN',
  status: 409,
  message: 'This forge audience is registered to another team: forge tokens for it are minted for that team only.',
} as const;
export const FORGE_AUDIENCE_NOT_REGISTERED = {
  code: 'FORGE_AUDIENCE_NOT_REGISTERED',
  status: 400,
  message: 'forge_audience names an audience the team has not registered: register it first (POST /api/v1/team/forge-audiences).',
} as const;
export const FORGE_AUDIENCE_NOT_FOUND = {
  code: 'FORGE_AUDIENCE_NOT_FOUND',
  status: 404,
  message: 'The team has not registered this forge audience.',
} as const;

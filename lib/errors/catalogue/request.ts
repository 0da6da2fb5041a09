// Entries of the error catalogue (lib/errors/catalogue.ts). Errors of any request: the envelope, body parsing and
// validation, limits, authentication and authorization.

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

// Entries of the error catalogue (lib/errors/catalogue.ts). Functions: the HTTPS door and the queued door
// (docs/functions.md).

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

// Functions, queued door (spec endpoint 10)
export const TOO_MANY_CONCURRENT_INVOCATIONS = {
  code: 'TOO_MANY_CONCURRENT_INVOCATIONS',
  status: 429,
  message: 'Too many concurrent invocations',
} as const;
export const INVOCATION_NOT_FOUND = { code: 'INVOCATION_NOT_FOUND', status: 404, message: 'No such invocation of this function.' } as const;
export const CALLBACK_URL_INVALID = {
  code: 'CALLBACK_URL_INVALID',
  status: 400,
  message: 'The X-Callback-Url header must be an https:// URL of at most 2,048 characters on a public address.',
} as const;

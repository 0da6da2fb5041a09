// Entries of the error catalogue (lib/errors/catalogue.ts). Trust and safety, platform administration, feedback and the
// billing webhook (docs/attention.md).

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

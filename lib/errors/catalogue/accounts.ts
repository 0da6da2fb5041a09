// Entries of the error catalogue (lib/errors/catalogue.ts). Teams and accounts: the team's administration, ownership
// transfer, notices, e-mail confirmation, integrations.

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

import { access } from '../../access/rules.ts';
import type { RouteRow } from './route-row.ts';

/** Accounts and integrations: feedback, ownership transfer, notices, e-mail confirmation, export, Git, SSO, environment variables. */
export const accountRoutes = [
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
] as const satisfies readonly RouteRow[];

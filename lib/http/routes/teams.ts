import { access } from '../../access/rules.ts';
import type { RouteRow } from './route-row.ts';

/** The current team's profile and deletion, the console's sign-in and the team's administration (docs/dashboard.md). */
export const teamRoutes = [
  {
    method: 'GET',
    path: '/api/v1/team/profile',
    handler: 'handlers/http/teams/get-current-team-profile.ts',
    access: access.team('member'),
    uses: ['table:read'],
  },
  {
    method: 'PATCH',
    path: '/api/v1/team/profile',
    handler: 'handlers/http/teams/update-current-team-profile.ts',
    access: access.team('admin'),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/teams/{team}/profile',
    handler: 'handlers/http/teams/get-team-profile.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read'],
  },
  {
    // The owner asks for the team's deletion (purged after a grace period unless a legal hold blocks it), or takes it back.
    method: 'POST',
    path: '/api/v1/team/deletion',
    handler: 'handlers/http/teams/request-team-deletion.ts',
    access: access.team('owner', { sessionOnly: true }),
    uses: ['table:read', 'table:write', 'scheduler:write'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/deletion',
    handler: 'handlers/http/teams/cancel-team-deletion.ts',
    access: access.team('owner', { sessionOnly: true }),
    uses: ['table:read', 'table:write', 'scheduler:write'],
  },
  // The console's sign-in: e-mail links, the session cookie (docs/dashboard.md)
  {
    // The address is the proof: anyone may ask for a link; limited per address and per IP address like confirmation resends.
    method: 'POST',
    path: '/api/v1/auth/sign-in-link',
    handler: 'handlers/http/auth/request-sign-in-link.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'mail:send'],
  },
  {
    // The single-use token in the body is the credential; the reply sets the session cookie.
    method: 'POST',
    path: '/api/v1/auth/sign-in',
    handler: 'handlers/http/auth/sign-in.ts',
    access: access.public(),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'POST',
    path: '/api/v1/auth/sign-out',
    handler: 'handlers/http/auth/sign-out.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/me',
    handler: 'handlers/http/me/get-me.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    method: 'GET',
    path: '/api/v1/me/teams',
    handler: 'handlers/http/me/list-my-teams.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    // Pending invitations to the signed-in person's own address.
    method: 'GET',
    path: '/api/v1/me/invitations',
    handler: 'handlers/http/me/list-my-invitations.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/me/invitations/{id}/accept',
    handler: 'handlers/http/me/accept-invitation.ts',
    access: access.signedIn({ sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  // The console's team administration: members, invitations, API keys
  {
    method: 'GET',
    path: '/api/v1/team/members',
    handler: 'handlers/http/teams/list-members.ts',
    access: access.team('member'),
    uses: ['table:read'],
  },
  {
    // Between admin and member; the owner's role moves only by the ownership transfer.
    method: 'PATCH',
    path: '/api/v1/team/members/{user_id}',
    handler: 'handlers/http/teams/update-member.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/members/{user_id}',
    handler: 'handlers/http/teams/remove-member.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/team/invitations',
    handler: 'handlers/http/teams/list-invitations.ts',
    access: access.team('admin'),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/team/invitations',
    handler: 'handlers/http/teams/create-invitation.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write', 'mail:send'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/invitations/{id}',
    handler: 'handlers/http/teams/revoke-invitation.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    // Keys are managed by people: an API key neither lists, makes nor revokes keys.
    method: 'GET',
    path: '/api/v1/team/api-keys',
    handler: 'handlers/http/teams/list-api-keys.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read'],
  },
  {
    method: 'POST',
    path: '/api/v1/team/api-keys',
    handler: 'handlers/http/teams/create-api-key.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/team/api-keys/{id}',
    handler: 'handlers/http/teams/revoke-api-key.ts',
    access: access.team('admin', { sessionOnly: true }),
    uses: ['table:read', 'table:write'],
  },
] as const satisfies readonly RouteRow[];

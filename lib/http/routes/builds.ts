import { access } from '../../access/rules.ts';
import type { RouteRow } from './route-row.ts';

/** Builds: Git webhooks, projects connected to a repository, builds by hand, logs, promotion (docs/builds.md). */
export const buildRoutes = [
  // Builds (docs/builds.md): Git webhooks in, builds through the builds queue, their logs
  {
    // The delivery's signature under a connected project's webhook secret is the credential (checked in lib/builds/intake.ts).
    method: 'POST',
    path: '/api/v1/webhooks/git/github',
    handler: 'handlers/http/webhooks/receive-github-event.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'builds:send', 'secrets:envEncryption'],
    docs: {
      note: 'GitHub webhook endpoint (push, pull_request, ping): 202 with what was queued and what was ignored, and why (docs/builds.md).',
      requiredHeaders: {
        'X-Hub-Signature-256': 'sha256=<hex HMAC-SHA256 of the raw body under the project webhook secret>',
        'X-GitHub-Event': 'push, pull_request or ping (others are answered 202 and ignored)',
        'X-GitHub-Delivery': 'the delivery id; a delivery is acted on once',
      },
    },
  },
  {
    method: 'POST',
    path: '/api/v1/webhooks/git/gitlab',
    handler: 'handlers/http/webhooks/receive-gitlab-event.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'builds:send', 'secrets:envEncryption'],
    docs: {
      note: 'GitLab webhook endpoint (Push Hook, Merge Request Hook): 202 with what was queued and what was ignored, and why (docs/builds.md).',
      requiredHeaders: {
        'X-Gitlab-Token': 'the project webhook secret',
        'X-Gitlab-Event': 'Push Hook or Merge Request Hook (others are answered 202 and ignored)',
        'X-Gitlab-Event-UUID': 'the delivery id; a delivery is acted on once',
      },
    },
  },
  // Forge tokens (docs/builds.md, "Forge tokens"): the public keys a forge verifies them with, and the audiences a team may aim them at
  {
    // The public halves of the forge tokens' signing keys, for any forge: no caller identity, no secret.
    method: 'GET',
    path: '/.well-known/jwks.json',
    handler: 'handlers/http/well-known/get-forge-jwks.ts',
    access: access.public(),
    uses: ['secrets:forgeSigning'],
    docs: {
      note: 'The JWKS of the forge tokens (ES256, `kid` the RFC 7638 thumbprint), answered as is (no envelope); a rotation publishes the next key ahead and keeps the old one until its tokens have expired.',
    },
  },
  {
    // An audience a team's forge tokens may carry, claimed platform-wide: another team's answers 409 FORGE_AUDIENCE_TAKEN.
    method: 'POST',
    path: '/api/v1/team/forge-audiences',
    handler: 'handlers/http/teams/register-forge-audience.ts',
    access: access.team('admin'),
    uses: ['table:read', 'table:write'],
  },
  {
    method: 'GET',
    path: '/api/v1/team/forge-audiences',
    handler: 'handlers/http/teams/list-forge-audiences.ts',
    access: access.team('member'),
    uses: ['table:read'],
  },
  {
    // Releases one (body `{audience}`); projects naming it get no forge token at their next build.
    method: 'DELETE',
    path: '/api/v1/team/forge-audiences',
    handler: 'handlers/http/teams/release-forge-audience.ts',
    access: access.team('admin'),
    uses: ['table:read', 'table:write'],
  },
  {
    // A project connected to a repository, made without an upload; settings link Git, so team admins and owners.
    method: 'POST',
    path: '/api/v1/projects',
    handler: 'handlers/http/projects/create-project.ts',
    access: access.team('admin'),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
  {
    // A new webhook secret, answered once as data.secret; the previous one stops matching at once.
    method: 'POST',
    path: '/api/v1/projects/{id}/git/webhook-secret',
    handler: 'handlers/http/projects/rotate-webhook-secret.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'secrets:envEncryption'],
  },
  {
    // A build by hand: 202 with the queued deployment.
    method: 'POST',
    path: '/api/v1/projects/{id}/builds',
    handler: 'handlers/http/projects/start-build.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write', 'builds:send'],
  },
  {
    // Clears the auto-deploy breaker (the only operation besides build outcomes that writes it).
    method: 'POST',
    path: '/api/v1/projects/{id}/auto-deploy/resume',
    handler: 'handlers/http/projects/resume-auto-deploy.ts',
    access: access.team('admin', { team: 'resource' }),
    uses: ['table:read', 'table:write'],
  },
  {
    // A build's log from a line number on: the polling cursor a running build is followed with.
    method: 'GET',
    path: '/api/v1/projects/{id}/deployments/{deployment_id}/log',
    handler: 'handlers/http/projects/get-build-log.ts',
    access: access.team('member', { team: 'resource' }),
    uses: ['table:read', 'table:write'],
  },
  {
    // Any member who may deploy may roll back.
    method: 'POST',
    path: '/api/v1/projects/{id}/promote',
    handler: 'handlers/http/projects/promote-deployment.ts',
    access: access.team('member', { team: 'resource' }),
    // scheduler:write: the schedules of the live deployment's functions change with it (lib/functions/schedules.ts).
    uses: ['table:read', 'table:write', 'scheduler:write'],
  },
] as const satisfies readonly RouteRow[];

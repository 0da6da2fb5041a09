import { access } from '../../access/rules.ts';
import type { RouteRow } from './route-row.ts';

/** Platform administration, trust and safety, and the billing webhook (docs/attention.md, docs/trust-and-safety.md). */
export const adminRoutes = [
  // Administration (platform administrators only)
  {
    method: 'POST',
    path: '/api/v1/admin/teams/{id}/legal-hold',
    handler: 'handlers/http/admin/set-legal-hold.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write', 'scheduler:write'],
  },
  {
    // Teams pending deletion, earliest deadline first; a held team past its deadline is `overdue`.
    method: 'GET',
    path: '/api/v1/admin/deletions',
    handler: 'handlers/http/admin/list-deletions.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // Spec endpoint 13: one team's functions telemetry, from the rows the doors write (lib/functions/telemetry-report.ts).
    method: 'GET',
    path: '/api/v1/admin/teams/{id}/functions',
    handler: 'handlers/http/admin/get-team-functions-telemetry.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // Spec endpoint 18: the latest finished keyword scan per project and branch (lib/abuse/scans.ts), one index partition per review status.
    method: 'GET',
    path: '/api/v1/admin/abuse-scans',
    handler: 'handlers/http/admin/list-abuse-scans.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // An administrator's decision on a listed scan: new to dismissed or actioned, once (a conditional transaction).
    method: 'POST',
    path: '/api/v1/admin/abuse-scans/{id}/review',
    handler: 'handlers/http/admin/review-abuse-scan.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  {
    // Spec endpoint 19: attention queues, each one index partition read by key (lib/attention/, docs/attention.md).
    method: 'GET',
    path: '/api/v1/admin/attention',
    handler: 'handlers/http/admin/get-attention.ts',
    access: access.platformAdmin(),
    uses: ['table:read'],
  },
  {
    // The operator command behind the billing queues: a team's subscription (plan, status, cancel_at_period_end).
    method: 'PUT',
    path: '/api/v1/admin/teams/{id}/subscription',
    handler: 'handlers/http/admin/set-team-subscription.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  {
    // `{"action": "retry"}` processes a failed webhook event's kept payload again, as a delivery would;
    // `{"action": "dismiss"}` takes it out of the attention queue unprocessed (docs/attention.md).
    method: 'POST',
    path: '/api/v1/admin/failed-webhook-events/{id}',
    handler: 'handlers/http/admin/act-on-failed-webhook-event.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  {
    // Takes a feedback out of the attention inbox; the first mark stands.
    method: 'POST',
    path: '/api/v1/admin/feedback/{id}/handled',
    handler: 'handlers/http/admin/mark-feedback-handled.ts',
    access: access.platformAdmin(),
    uses: ['table:read', 'table:write'],
  },
  // Trust and safety (docs/trust-and-safety.md)
  {
    // Spec endpoint 3: anyone may report, with or without an account; limits are table counters (lib/abuse/).
    method: 'POST',
    path: '/api/v1/public/abuse-reports',
    handler: 'handlers/http/abuse/submit-abuse-report.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'mail:send'],
  },
  {
    // The billing provider's subscription events (docs/attention.md): no account, the Stripe-Signature over the
    // raw body is the credential (checked in the handler, before anything is read or recorded).
    method: 'POST',
    path: '/api/v1/webhooks/billing',
    handler: 'handlers/http/webhooks/receive-billing-event.ts',
    access: access.public(),
    uses: ['table:read', 'table:write', 'secrets:billingWebhook'],
    docs: {
      note: 'Stripe webhook endpoint: the body is a Stripe event, verified by its signature (docs/attention.md).',
      requiredHeaders: {
        'Stripe-Signature': 't=<epoch seconds>,v1=<hex HMAC-SHA256 of "t.body" under the endpoint secret>; t within 300 s',
      },
    },
  },
] as const satisfies readonly RouteRow[];

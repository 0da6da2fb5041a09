import { findFailedWebhookEvent } from '../../../lib/attention/webhooks.ts';
import { retryFailedBillingEvent } from '../../../lib/billing/webhook.ts';
import { ApiError } from '../../../lib/http/errors.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler(
  'POST /api/v1/admin/failed-webhook-events/{id}/retry',
  { uuidParams: { id: 'FAILED_WEBHOOK_EVENT_ID_INVALID' } },
  async ({ params, principal, log }) => {
    const row = await findFailedWebhookEvent(params.id!);
    if (!row) throw new ApiError('FAILED_WEBHOOK_EVENT_NOT_FOUND');
    const result = await retryFailedBillingEvent(row, log);
    log.info('failed webhook event retried', { id: row.id, provider_event_id: row.provider_event_id, outcome: result.outcome, by: principal!.user!.user_id });
    return { data: { id: row.id, provider_event_id: row.provider_event_id, event_type: row.event_type, ...result } };
  },
);

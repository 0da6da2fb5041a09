import { dismissFailedWebhookEvent, findFailedWebhookEvent } from '../../../lib/attention/webhooks.ts';
import { ApiError } from '../../../lib/http/errors.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler(
  'POST /api/v1/admin/failed-webhook-events/{id}/dismiss',
  { uuidParams: { id: 'FAILED_WEBHOOK_EVENT_ID_INVALID' } },
  async ({ params, principal, log }) => {
    const row = await findFailedWebhookEvent(params.id!);
    // Gone meanwhile (a retry applied it, another admin dismissed it): nothing of this row is left to dismiss.
    if (!row || !(await dismissFailedWebhookEvent(row))) throw new ApiError('FAILED_WEBHOOK_EVENT_NOT_FOUND');
    const dismissedBy = principal!.user!.user_id;
    // The row is gone; the log line is the record of who dismissed which provider event.
    log.info('failed webhook event dismissed', { id: row.id, provider: row.provider, provider_event_id: row.provider_event_id, by: dismissedBy });
    return { data: { id: row.id, provider_event_id: row.provider_event_id, event_type: row.event_type, dismissed_at: new Date().toISOString(), dismissed_by: dismissedBy } };
  },
);

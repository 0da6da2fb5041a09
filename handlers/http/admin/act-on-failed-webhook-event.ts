import { dismissFailedWebhookEvent, findFailedWebhookEvent } from '../../../lib/attention/webhooks.ts';
import { retryFailedBillingEvent } from '../../../lib/billing/webhook.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { FAILED_WEBHOOK_EVENT_ID_INVALID, FAILED_WEBHOOK_EVENT_NOT_FOUND } from '../../../lib/errors/catalogue/admin.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import * as z from '../../../lib/schema.ts';

const body = z.strictObject({ action: z.enum(['retry', 'dismiss']) });

/**
 * A platform administrator's action on a failed webhook event's row (docs/attention.md): `retry` processes the
 * event it kept again, as a delivery would; `dismiss` takes the row out of the queue unprocessed. One route for
 * both: the stack is near CloudFormation's 500 resources, and each route costs six.
 */
export const handler = defineHandler(
  'POST /api/v1/admin/failed-webhook-events/{id}',
  { body, uuidParams: { id: FAILED_WEBHOOK_EVENT_ID_INVALID } },
  async ({ params, principal, body, log }) => {
    const row = await findFailedWebhookEvent(params.id!);
    if (!row) throw new ApiError(FAILED_WEBHOOK_EVENT_NOT_FOUND);
    const by = principal!.user!.user_id;
    const about = { id: row.id, provider_event_id: row.provider_event_id, event_type: row.event_type };
    if (body.action === 'retry') {
      const result = await retryFailedBillingEvent(row, log);
      log.info('failed webhook event retried', { ...about, outcome: result.outcome, by });
      return { data: { ...about, action: 'retry', ...result } };
    }
    // Gone meanwhile (a retry applied it, another admin dismissed it): nothing of this row is left to dismiss.
    if (!(await dismissFailedWebhookEvent(row))) throw new ApiError(FAILED_WEBHOOK_EVENT_NOT_FOUND);
    // The row is gone; the log line is the record of who dismissed which provider event.
    log.info('failed webhook event dismissed', { ...about, provider: row.provider, by });
    return { data: { ...about, action: 'dismiss', dismissed_at: new Date().toISOString(), dismissed_by: by } };
  },
);

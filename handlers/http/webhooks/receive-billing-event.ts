import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { verifySignature } from '../../../lib/billing/signature.ts';
import { providerEventOf } from '../../../lib/billing/subscription-events.ts';
import { receiveBillingEvent } from '../../../lib/billing/webhook.ts';
import { config } from '../../../lib/config.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { WEBHOOK_PAYLOAD_INVALID, WEBHOOK_SIGNATURE_INVALID } from '../../../lib/errors/catalogue/admin.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// The signing secret comes from Secrets Manager on cold start, before the first delivery.
await loadSecrets(['billingWebhook']);

/** Stripe's events are a few KB; a subscription with many items stays far below this. */
const MAX_EVENT_BYTES = 512 * 1024;

export const handler = defineHandler(
  'POST /api/v1/webhooks/billing',
  // The signature covers the bytes as sent: the body must reach the check unparsed.
  { rawBody: { maxBytes: MAX_EVENT_BYTES, mediaType: 'application/json' } },
  async ({ headers, rawBody, log }) => {
    const failure = verifySignature(headers['stripe-signature'], rawBody, config.billingWebhookSecret());
    if (failure) throw new ApiError(WEBHOOK_SIGNATURE_INVALID, { details: { reason: failure } });
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new ApiError(WEBHOOK_PAYLOAD_INVALID);
    }
    const event = providerEventOf(parsed);
    if (!event) throw new ApiError(WEBHOOK_PAYLOAD_INVALID);
    const result = await receiveBillingEvent(event, log);
    return { data: { event_id: event.id, event_type: event.type, ...result } };
  },
);

import { checkedCallbackUrl, queuedRequestOf, invoke } from '../../../lib/functions/queued-door.ts';
import { FunctionTelemetry } from '../../../lib/functions/telemetry.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { idempotencyKey } from '../../../lib/idempotency/idempotency.ts';
/** What API Gateway accepts at most; the body is cut at 1 MB after. */
const API_GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

const telemetry = new FunctionTelemetry();

// Any body is the handler's: taken raw up to what API Gateway accepts, then cut at 1 MB (spec Limits).
export const handler = defineHandler(
  'POST /api/v1/public/functions/{subdomain}/{name}',
  { rawBody: { maxBytes: API_GATEWAY_MAX_BODY_BYTES } },
  async (ctx) => {
    // A malformed key is refused before anything is counted or made.
    const key = idempotencyKey(ctx.headers);
    const callbackUrl = await checkedCallbackUrl(ctx.headers);
    try {
      const data = await invoke({
        subdomain: ctx.params.subdomain!,
        name: ctx.params.name!,
        sourceIp: ctx.sourceIp,
        request: queuedRequestOf(ctx.event, ctx.rawBody),
        telemetry,
        idempotencyKey: key,
        callbackUrl,
      });
      return { status: 202, data };
    } finally {
      await telemetry.flush();
    }
  },
);

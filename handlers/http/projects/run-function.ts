import { runNow } from '../../../lib/functions/queued-door.ts';
import { FunctionTelemetry } from '../../../lib/functions/telemetry.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

/** What API Gateway accepts at most; the body is cut at 1 MB after, as the queued door cuts it. */
const API_GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

const telemetry = new FunctionTelemetry();

/** Run now: a queued invocation of a live function with trigger `manual` (team admins), answered as the queued door. */
export const handler = defineHandler(
  'POST /api/v1/projects/{id}/functions/{name}/runs',
  { rawBody: { maxBytes: API_GATEWAY_MAX_BODY_BYTES } },
  async (ctx) => {
    const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
    try {
      const data = await runNow({
        projectId: item.id,
        name: ctx.params.name!,
        body: ctx.rawBody,
        contentType: ctx.headers['content-type'],
        telemetry,
      });
      return { status: 202, data };
    } finally {
      await telemetry.flush();
    }
  },
);

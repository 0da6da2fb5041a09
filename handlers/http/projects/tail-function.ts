import { ApiError } from '../../../lib/errors/api-error.ts';
import { FUNCTION_NOT_FOUND } from '../../../lib/errors/catalogue/functions.ts';
import { getFunctionRecord } from '../../../lib/functions/records.ts';
import { streamFunctionTail } from '../../../lib/functions/tail.ts';
import { defineStreamingHandler } from '../../../lib/http/streaming.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

/** Live tail of a live function: server-sent events while the caller stays (lib/functions/tail.ts). */
export const { answer, handler } = defineStreamingHandler(
  'GET /api/v1/projects/{id}/functions/{name}/tail',
  { contentType: 'text/event-stream; charset=utf-8' },
  async (ctx) => {
    const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
    const live = item.live_deployment_id;
    const record = live ? await getFunctionRecord(item.id, live, ctx.params.name!) : null;
    if (!record) throw new ApiError(FUNCTION_NOT_FOUND);
    return record;
  },
  (record, out, signal) => streamFunctionTail(record, out, signal),
);

import { listInvocations } from '../../../lib/functions/invocation-views.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

/** A function's recent queued invocations (newest first, at most 50, within the 7-day retention). */
export const handler = defineHandler('GET /api/v1/projects/{id}/functions/{name}/invocations', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: { invocations: await listInvocations(item.id, ctx.params.name!) } };
});

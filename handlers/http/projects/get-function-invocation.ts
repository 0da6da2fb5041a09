import { memberInvocationView } from '../../../lib/functions/invocation-views.ts';
import { getInvocation } from '../../../lib/functions/invocation-records.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { INVOCATION_NOT_FOUND } from '../../../lib/errors/catalogue/functions.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler('GET /api/v1/projects/{id}/functions/{name}/invocations/{invocation_id}', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  const record = await getInvocation(ctx.params.invocation_id!.toLowerCase());
  if (!record || record.project_id !== item.id || record.function_name !== ctx.params.name) throw new ApiError(INVOCATION_NOT_FOUND);
  return { data: await memberInvocationView(record) };
});

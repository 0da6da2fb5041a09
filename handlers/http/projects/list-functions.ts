import { listLiveFunctions } from '../../../lib/functions/records.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler('GET /api/v1/projects/{id}/functions', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: { functions: await listLiveFunctions(item) } };
});

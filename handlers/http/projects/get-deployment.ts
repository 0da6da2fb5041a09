import { getDeployment } from '../../../lib/promotion/deployments.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler('GET /api/v1/projects/{id}/deployments/{deployment_id}', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: await getDeployment(item, ctx.params.deployment_id!) };
});

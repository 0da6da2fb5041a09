import * as z from '../../../lib/schema.ts';
import { listDeployments } from '../../../lib/promotion/deployments.ts';
import { pageOf, pageQueryFields } from '../../../lib/http/page-query.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

const query = z.object(pageQueryFields);

export const handler = defineHandler('GET /api/v1/projects/{id}/deployments', { query }, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: await listDeployments(item, pageOf(ctx.query)) };
});

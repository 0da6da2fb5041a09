import { buildLogPage, buildLogQuerySchema } from '../../../lib/builds/operations.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler(
  'GET /api/v1/projects/{id}/deployments/{deployment_id}/log',
  { query: buildLogQuerySchema },
  async (ctx) => {
    const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
    return { data: await buildLogPage(item, ctx.params.deployment_id!, ctx.query) };
  },
);

import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';
import { toProject } from '../../../lib/projects/projects.ts';

export const handler = defineHandler('GET /api/v1/projects/{id}', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: toProject(item) };
});

import { resumeProjectAutoDeploy } from '../../../lib/builds/operations.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler('POST /api/v1/projects/{id}/auto-deploy/resume', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: await resumeProjectAutoDeploy(item) };
});

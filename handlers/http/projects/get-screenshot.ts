import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';
import { latestScreenshot } from '../../../lib/screenshots/jobs.ts';

export const handler = defineHandler('GET /api/v1/projects/{id}/screenshot', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  // null until a capture of one of its publishes has reported.
  return { data: { screenshot: await latestScreenshot(item) } };
});

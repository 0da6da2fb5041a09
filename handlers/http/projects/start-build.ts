import { startBuildSchema, startManualBuild } from '../../../lib/builds/operations.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler('POST /api/v1/projects/{id}/builds', { body: startBuildSchema }, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { status: 202, data: await startManualBuild(item, ctx.body) };
});

import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';
import { requestProjectDeletion } from '../../../lib/lifecycle/project-deletion.ts';

export const handler = defineHandler('DELETE /api/v1/projects/{id}', {}, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  // 202: the project answers nowhere from now on; the deletions worker removes what it owned.
  return { status: 202, data: await requestProjectDeletion(item.id) };
});

import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';
import { projectSettingsSchema, updateProjectSettings } from '../../../lib/project-setup/settings.ts';

export const handler = defineHandler('PATCH /api/v1/projects/{id}', { body: projectSettingsSchema }, async (ctx) => {
  const { item } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: await updateProjectSettings(item, ctx.body) };
});

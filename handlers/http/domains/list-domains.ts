import { listProjectDomains } from '../../../lib/domains/listing.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { loadProjectForCaller } from '../../../lib/projects/access.ts';

export const handler = defineHandler('GET /api/v1/projects/{id}/domains', {}, async (ctx) => {
  const { item: project } = await loadProjectForCaller(ctx, ctx.params.id!);
  return { data: { domains: await listProjectDomains(project.id) } };
});

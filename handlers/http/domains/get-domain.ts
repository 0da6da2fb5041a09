import { loadDomainForCaller } from '../../../lib/domains/access.ts';
import { toDomain } from '../../../lib/domains/domains.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler('GET /api/v1/domains/{id}', {}, async (ctx) => {
  const { item } = await loadDomainForCaller(ctx, ctx.params.id!);
  return { data: toDomain(item) };
});

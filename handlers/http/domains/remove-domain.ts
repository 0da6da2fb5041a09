import { loadDomainForCaller } from '../../../lib/domains/access.ts';
import { toDomain } from '../../../lib/domains/domains.ts';
import { removeDomain } from '../../../lib/domains/removal.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler('DELETE /api/v1/domains/{id}', {}, async (ctx) => {
  const { item } = await loadDomainForCaller(ctx, ctx.params.id!);
  const after = await removeDomain(item);
  ctx.log.info('domain removed', { domain_id: after.id });
  return { data: toDomain(after) };
});

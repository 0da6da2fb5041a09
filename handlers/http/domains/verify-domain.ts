import { loadDomainForCaller } from '../../../lib/domains/access.ts';
import { toDomain } from '../../../lib/domains/domains.ts';
import { verifyDomain } from '../../../lib/domains/verification.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler('POST /api/v1/domains/{id}/verify', {}, async (ctx) => {
  const { item } = await loadDomainForCaller(ctx, ctx.params.id!);
  const after = await verifyDomain(item);
  ctx.log.info('domain verification', { domain_id: after.id, status: after.status });
  return { data: toDomain(after) };
});

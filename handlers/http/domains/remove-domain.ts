import { loadDomainForCaller } from '../../../lib/domains/access.ts';
import { markDomainRemoved, toDomain } from '../../../lib/domains/domains.ts';
import { deleteManagedZone } from '../../../lib/domains/zones.ts';
import { ApiError } from '../../../lib/http/errors.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler('DELETE /api/v1/domains/{id}', {}, async (ctx) => {
  const { item } = await loadDomainForCaller(ctx, ctx.params.id!);
  // The zone first: if Route 53 refuses, nothing has changed and the caller can retry.
  if (item.hosted_zone_id) {
    try {
      await deleteManagedZone(item.hosted_zone_id as string);
    } catch (error) {
      ctx.log.error('managed zone removal failed', { domain_id: item.id, error: (error as Error).name });
      throw new ApiError('DNS_ZONE_UNAVAILABLE');
    }
  }
  const after = await markDomainRemoved({ id: item.id as string, domain: item.domain as string }, new Date());
  ctx.log.info('domain removed', { domain_id: after.id });
  return { data: toDomain(after) };
});

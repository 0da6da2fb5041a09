import { loadDomainForCaller } from '../../../lib/domains/access.ts';
import { toRetrySslDomain } from '../../../lib/domains/domains.ts';
import { attemptTls } from '../../../lib/domains/tls.ts';
import { ApiError } from '../../../lib/http/errors.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler('POST /api/v1/domains/{id}/retry-ssl', {}, async (ctx) => {
  const { item } = await loadDomainForCaller(ctx, ctx.params.id!);
  if (item.status !== 'verified') throw new ApiError('DOMAIN_NOT_VERIFIED');
  if (item.ssl_status === 'issued') throw new ApiError('SSL_ALREADY_ISSUED');
  // An immediate attempt, chain 1: a failure starts a fresh automatic retry chain. A racing attempt that claimed first answers for this one.
  const { outcome, item: after } = await attemptTls(item);
  ctx.log.info('ssl retry', { domain_id: item.id, outcome, ssl_status: after.ssl_status });
  return { data: toRetrySslDomain(after) };
});

import { loadDomainForCaller } from '../../../lib/domains/access.ts';
import { toRetrySslDomain } from '../../../lib/domains/domains.ts';
import { retrySsl } from '../../../lib/domains/tls-attempts.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { DOMAIN_NOT_VERIFIED, SSL_ALREADY_ISSUED } from '../../../lib/errors/catalogue/domains.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

export const handler = defineHandler('POST /api/v1/domains/{id}/retry-ssl', {}, async (ctx) => {
  const { item } = await loadDomainForCaller(ctx, ctx.params.id!);
  if (item.status !== 'verified') throw new ApiError(DOMAIN_NOT_VERIFIED);
  if (item.ssl_status === 'issued') throw new ApiError(SSL_ALREADY_ISSUED);
  // Attempt 1 of a new chain, claimed here and made by the SSL-retries worker. A racing call that claimed first answers for this one.
  const { outcome, item: after } = await retrySsl(item);
  ctx.log.info('ssl retry', { domain_id: item.id, outcome, ssl_status: after.ssl_status, ssl_attempts: after.ssl_attempts });
  return { data: toRetrySslDomain(after) };
});

import * as z from '../../../lib/schema.ts';
import { loadDomainForCaller } from '../../../lib/domains/access.ts';
import { GEO_MODES, toDomain } from '../../../lib/domains/domains.ts';
import { getDomainItem } from '../../../lib/domains/records.ts';
import { applyGeoPolicy, normalizeGeoPolicy, requestGeoPolicyRetry, saveGeoPolicy } from '../../../lib/domains/geo.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { DOMAIN_NOT_FOUND, DOMAIN_NOT_ON_DEDICATED_ZONE, GEO_POLICY_NOT_APPLIED } from '../../../lib/errors/catalogue/domains.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

const body = z.object({
  geo_mode: z.enum(GEO_MODES),
  // ISO 3166-1 has 249 codes; room for a list with repeats, not for an unbounded body.
  geo_countries: z.optional(z.array(z.string().check(z.maxLength(8))).check(z.maxLength(500))),
});

export const handler = defineHandler('PATCH /api/v1/domains/{id}/geo-filter', { body }, async (ctx) => {
  const { item } = await loadDomainForCaller(ctx, ctx.params.id!);
  const policy = normalizeGeoPolicy(ctx.body.geo_mode, ctx.body.geo_countries);
  // Checked here for the common case; saveGeoPolicy's condition decides when a removal races the save.
  if (typeof item.distribution_id !== 'string') throw new ApiError(DOMAIN_NOT_ON_DEDICATED_ZONE);
  const saved = await saveGeoPolicy(item.id, policy, new Date());
  try {
    const applied = await applyGeoPolicy(item.id);
    if (applied.outcome === 'applied') {
      ctx.log.info('geo policy applied', { domain_id: item.id, geo_mode: policy.geo_mode, revision: applied.item.geo_revision });
      return { data: toDomain(applied.item) };
    }
    // Removed, or its distribution taken away, after the save: answered as if that had come first.
    const now = await getDomainItem(item.id);
    throw new ApiError(!now || now.deleted_at ? DOMAIN_NOT_FOUND : DOMAIN_NOT_ON_DEDICATED_ZONE);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    ctx.log.warn('geo policy saved, not applied', { domain_id: item.id, error: (error as Error).name, message: (error as Error).message });
  }
  try {
    await requestGeoPolicyRetry(item.id);
  } catch (error) {
    // The policy is saved and marked not applied either way; the next PATCH applies it.
    ctx.log.error('geo policy retry not queued', { domain_id: item.id, error: (error as Error).name });
  }
  throw new ApiError(GEO_POLICY_NOT_APPLIED, { details: { domain: toDomain(saved) } });
});

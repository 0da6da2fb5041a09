// The library's index, not its package entry: the entry registers every locale's country names
// (78 locale files, about 700 KB), while validation needs only the code table.
import { getAlpha2Codes } from 'i18n-iso-countries/index.js';
import { setGeoRestriction, type GeoRestrictionInput } from '../aws/cloudfront-lite.ts';
import { sendMessage } from '../aws/sqs-lite.ts';
import { config } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import {
  DOMAIN_NOT_FOUND,
  DOMAIN_NOT_ON_DEDICATED_ZONE,
  GEO_COUNTRIES_REQUIRED,
  GEO_COUNTRY_INVALID,
} from '../errors/catalogue/domains.ts';
import { logger } from '../logger.ts';
import type { DomainRecord } from './domains.ts';
import { getDomainItem, type DomainItem } from './records.ts';
import { forgetGeoApplied, type GeoMode, type GeoPolicy, recordGeoApplied, writeGeoPolicy } from './geo-records.ts';

/**
 * The ISO 3166-1 alpha-2 codes, from i18n-iso-countries' maintained table.
 * XK (Kosovo) is in that table but is a user-assigned code, not an ISO 3166-1
 * assignment, so it is not offered.
 */
const ISO_ALPHA2 = new Set(Object.keys(getAlpha2Codes()).filter((code) => code !== 'XK'));

/** Whether `code`, as given, upper-cased, is an assigned ISO 3166-1 alpha-2 code. */
export const isCountryCode = (code: string) => ISO_ALPHA2.has(code.toUpperCase());

/**
 * The policy a request asks for, checked: `geo_countries` is required (at
 * least one) unless the mode is `off`, every entry must be an ISO 3166-1
 * alpha-2 code in any case, and the set is stored upper-cased, deduplicated
 * and sorted. `off` keeps no countries: nothing is restricted.
 */
export function normalizeGeoPolicy(mode: GeoMode, countries: string[] | undefined): GeoPolicy {
  const invalid = [...new Set((countries ?? []).filter((code) => !isCountryCode(code)))];
  if (invalid.length > 0) throw new ApiError(GEO_COUNTRY_INVALID, { details: { invalid } });
  if (mode === 'off') return { geo_mode: 'off', geo_countries: [] };
  const set = [...new Set((countries ?? []).map((code) => code.toUpperCase()))].sort();
  if (set.length === 0) throw new ApiError(GEO_COUNTRIES_REQUIRED, { details: { geo_mode: mode } });
  return { geo_mode: mode, geo_countries: set };
}

/**
 * Saves the policy on a live domain that has its own distribution, and bumps
 * `geo_revision`, in one conditional write. The distribution is not touched
 * here (applyGeoPolicy does that), so a CDN failure never loses the policy.
 */
export async function saveGeoPolicy(domainId: string, policy: GeoPolicy, now: Date): Promise<DomainItem> {
  const saved = await writeGeoPolicy(domainId, policy, now);
  if (saved) return saved;
  const item = await getDomainItem(domainId);
  if (!item || item.deleted_at) throw new ApiError(DOMAIN_NOT_FOUND);
  throw new ApiError(DOMAIN_NOT_ON_DEDICATED_ZONE);
}

/** CloudFront's geo restriction for a policy: an allowlist is a whitelist, a blocklist a blacklist. */
export function geoRestrictionOf(policy: GeoPolicy): GeoRestrictionInput {
  if (policy.geo_mode === 'off') return { restrictionType: 'none', locations: [] };
  return { restrictionType: policy.geo_mode === 'allowlist' ? 'whitelist' : 'blacklist', locations: policy.geo_countries };
}

/** A racing save keeps moving the revision; after this many rounds the retry queue takes over. */
const APPLY_ROUNDS = 4;

export type GeoApplyResult =
  /** The distribution holds the domain's current policy; `item` is the domain after recording that. */
  | { outcome: 'applied'; item: DomainItem }
  /** Nothing to apply: the domain was removed, or has no distribution (the TLS part applies the saved policy when it makes one). */
  | { outcome: 'gone' };

/**
 * Puts the domain's saved policy on its distribution and records which
 * revision it put there. The record is conditional on the revision still
 * being the one this round read: when a save raced in between, this round's
 * write to CloudFront may have landed after the newer policy's, so it marks
 * the distribution stale (any recorded revision may no longer be what
 * CloudFront holds) and goes again with the newest policy. A round whose
 * IfMatch CloudFront refused (another writer changed the configuration
 * between read and write) goes again too. Throws when CloudFront (or the
 * table) fails; the policy stays saved and `geo_applied_revision` behind.
 */
export async function applyGeoPolicy(domainId: string): Promise<GeoApplyResult> {
  for (let round = 0; round < APPLY_ROUNDS; round++) {
    const item = await getDomainItem(domainId);
    if (!item || item.deleted_at || typeof item.distribution_id !== 'string') return { outcome: 'gone' };
    const record = item as unknown as DomainRecord;
    const revision = record.geo_revision ?? 0;
    if (!geoPolicyPending(item)) return { outcome: 'applied', item };
    try {
      // GetDistributionConfig, then UpdateDistribution with IfMatch: only the restriction changes.
      await setGeoRestriction(
        record.distribution_id!,
        geoRestrictionOf({ geo_mode: record.geo_mode, geo_countries: record.geo_countries ?? [] }),
      );
    } catch (error) {
      if ((error as Error).name === 'PreconditionFailed') continue;
      throw error;
    }
    const applied = await recordGeoApplied(domainId, revision, record.distribution_id);
    if (applied) return { outcome: 'applied', item: applied };
    // A newer policy was saved while this round wrote an older one to CloudFront: whatever revision is
    // recorded may no longer be what the distribution holds, so none is, until a round records the newest.
    await forgetGeoApplied(domainId);
  }
  throw new Error(`the geo policy of domain ${domainId} kept changing while it was applied`);
}

/** Whether the distribution is behind the saved policy. */
export const geoPolicyPending = (item: DomainItem) =>
  // A domain whose policy was never saved has nothing to apply (revision 0, applied 0).
  (item.geo_applied_revision === undefined ? 0 : item.geo_applied_revision) !== (item.geo_revision ?? 0);

/**
 * A distribution just made for a domain holds no geo restriction. A policy the domain already has (saved for an
 * earlier distribution of it) is put on the new one now: no revision is recorded as applied to this distribution
 * yet, then the policy is applied as a PATCH applies it; when CloudFront does not take it, the geo-filters
 * worker tries again from its queue. Never throws: the distribution is made either way.
 */
export async function applyGeoPolicyToNewDistribution(item: DomainItem): Promise<void> {
  if (item.geo_mode !== 'allowlist' && item.geo_mode !== 'blocklist') return;
  const domainId = item.id;
  try {
    if (!(await forgetGeoApplied(domainId, item.distribution_id))) return;
    await applyGeoPolicy(domainId);
  } catch (error) {
    logger.warn('geo policy not applied to the new distribution; queued for the geo-filters worker', {
      domain_id: domainId,
      error: (error as Error).name,
    });
    await requestGeoPolicyRetry(domainId).catch((sendError: unknown) =>
      logger.error('geo policy retry not queued', { domain_id: domainId, error: (sendError as Error).name }),
    );
  }
}

/** Asks the geo-filters worker to apply the domain's saved policy later (SQS redelivers it until CloudFront takes it). */
export async function requestGeoPolicyRetry(domainId: string): Promise<void> {
  // One send on the request path: the signed fetch of sqs-lite, not the SQS client (docs/deploy.md, "Handler bundles").
  await sendMessage({ queueUrl: config.queueUrl('geoFilters'), body: JSON.stringify({ kind: 'geo_policy', domain_id: domainId }) });
}

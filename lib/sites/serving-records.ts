import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config, perPlatform } from '../config.ts';
import { keys } from '../db/keys.ts';
import { RecordCache } from './serving-cache.ts';

/**
 * What serving reads of the table, and only reads: the project a subdomain's hold or a custom domain's
 * hostname claim names, with the domain. Every read is consistent, so a promote or a rollback is visible on
 * the next request; reads go through the process's record cache (lib/sites/serving-cache.ts), which keeps
 * an item only while this process made no table write since.
 */

/** What serving needs of a project item. */
export interface ServedProject {
  id: string;
  team_id: string;
  slug: string;
  subdomain: string;
  status?: string;
  live_deployment_id?: string | null;
  root_directory?: string | null;
  analytics_enabled?: boolean;
  primary_domain_id?: string | null;
  /** Internal copy of the primary domain's hostname, written and cleared with primary_domain_id. */
  primary_domain_hostname?: string | null;
  platform_url_mode?: string | null;
  preview_slug?: string | null;
}

/** What serving needs of a custom domain item. */
export interface ServedDomain {
  id: string;
  project_id: string;
  domain: string;
  status: string;
  deleted_at?: string | null;
  geo_mode?: 'off' | 'allowlist' | 'blocklist';
  geo_countries?: string[];
}

const records = new RecordCache<unknown>();

async function getItem<T>(key: { pk: string; sk: string }): Promise<T | null> {
  return (await records.get(`${key.pk}\n${key.sk}`, async () => {
    const out = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: key, ConsistentRead: true }));
    return (out.Item as T | undefined) ?? null;
  })) as T | null;
}

/** The project item, as serving reads it. */
export function servedProject(projectId: string): Promise<ServedProject | null> {
  return getItem<ServedProject>(keys.project(projectId));
}

/**
 * Which project each subdomain's hold named when last read, per process. Only the project item is read
 * on each request (consistently, for promote and rollback); the hold again only when that project no
 * longer answers to the subdomain (it moved, or is gone), which is when a hold can name another project.
 */
const HOLD_CACHE_LIMIT = 1000;
const holdCache = perPlatform(() => new Map<string, string>());

/** The project holding a subdomain (via its hold item), or null. */
export async function projectForSubdomain(subdomain: string): Promise<ServedProject | null> {
  const remembered = holdCache().get(subdomain);
  if (remembered) {
    const project = await servedProject(remembered);
    // A project being deleted may have released its hold to another: read the hold again.
    if (project && project.subdomain === subdomain && project.status !== 'deleting') return project;
    holdCache().delete(subdomain);
  }
  const hold = await getItem<{ project_id?: string }>(keys.subdomainHold(subdomain));
  if (!hold?.project_id) return null;
  const project = await servedProject(hold.project_id);
  // A hold whose project is gone, or that the project no longer answers to, serves nothing.
  if (!project || project.subdomain !== subdomain) return null;
  if (holdCache().size >= HOLD_CACHE_LIMIT) holdCache().delete(holdCache().keys().next().value!);
  holdCache().set(subdomain, project.id);
  return project;
}

/**
 * Hostname claims (`DOMAINHOST#{hostname}` -> domain id, project id), kept a
 * short while per process. A claim names one domain for that domain's whole
 * life, and the domain item is read on every request anyway, so a stale entry
 * (the domain removed, the hostname claimed again by another project) shows as
 * a removed or different domain and is read afresh at once. Hostnames without
 * a claim are not remembered: a new domain answers as soon as it is verified.
 */
const CLAIM_CACHE_TTL_MS = 60_000;
const CLAIM_CACHE_LIMIT = 1000;
const claimCache = perPlatform(() => new Map<string, { domainId: string; projectId: string; until: number }>());

async function domainClaim(hostname: string, fresh: boolean): Promise<{ domainId: string; projectId: string } | null> {
  const cached = claimCache().get(hostname);
  if (!fresh && cached && cached.until > Date.now()) return cached;
  claimCache().delete(hostname);
  const claim = await getItem<{ domain_id?: string; project_id?: string }>(keys.domainHost(hostname));
  if (!claim?.domain_id || !claim.project_id) return null;
  if (claimCache().size >= CLAIM_CACHE_LIMIT) claimCache().delete(claimCache().keys().next().value!);
  const entry = { domainId: claim.domain_id, projectId: claim.project_id, until: Date.now() + CLAIM_CACHE_TTL_MS };
  claimCache().set(hostname, entry);
  return entry;
}

/**
 * The project a custom domain serves, with the domain: only a verified domain
 * that is not removed and still belongs to the project. The domain and the
 * project are read together (consistent reads, as for subdomains).
 */
export async function projectForCustomDomain(hostname: string): Promise<{ project: ServedProject; domain: ServedDomain } | null> {
  for (const fresh of [false, true]) {
    const claim = await domainClaim(hostname, fresh);
    if (!claim) return null;
    const [domain, project] = await Promise.all([getItem<ServedDomain>(keys.domain(claim.domainId)), servedProject(claim.projectId)]);
    const current = domain && !domain.deleted_at && domain.domain === hostname && domain.project_id === claim.projectId;
    // A remembered claim whose domain is gone or changed hands: read the claim itself once more.
    if (!current && !fresh) continue;
    if (!current || !project || domain.status !== 'verified') return null;
    return { project, domain };
  }
  return null;
}

import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { ApiError, isApiError } from '../errors/api-error.ts';
import { DNS_ZONE_UNAVAILABLE } from '../errors/catalogue/domains.ts';
import { logger } from '../logger.ts';
import { markDomainRemoved, type DomainItem } from './records.ts';
import { queueTeardown } from './tls-queue.ts';
import { deleteManagedZone } from './zones.ts';

/**
 * Removes one domain: its managed zone first, so that a Route 53 refusal leaves
 * everything as it was (DNS_ZONE_UNAVAILABLE) and the caller can retry; then
 * `deleted_at` and the hostname's release in one transaction.
 */
export async function removeDomain(item: DomainItem, now = new Date()): Promise<DomainItem> {
  if (item.hosted_zone_id) {
    try {
      await deleteManagedZone(item.hosted_zone_id);
    } catch (error) {
      throw new ApiError(DNS_ZONE_UNAVAILABLE, { details: { reason: (error as Error).name } });
    }
  }
  const removed = await markDomainRemoved({ id: item.id, domain: item.domain, project_id: item.project_id }, now);
  // The distribution and certificate go in the background (disabling a distribution takes minutes).
  if (removed.distribution_id || removed.certificate_arn) {
    try {
      await queueTeardown(removed.id);
    } catch (error) {
      logger.error('ssl: teardown of a removed domain not queued', {
        domain_id: removed.id,
        distribution_id: removed.distribution_id,
        error: (error as Error).name,
      });
    }
  }
  return removed;
}

/**
 * Removes every domain of a project being deleted, so its hostnames are free
 * for other projects and its managed zones do not outlive it. Safe to run
 * again: a domain another run removed is skipped; a zone Route 53 refuses to
 * delete throws, and the deletion is retried from its queue.
 */
export async function removeProjectDomains(projectId: string): Promise<void> {
  const items = await queryAll<DomainItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.domainByProject(projectId, '', '').gsi1pk },
  });
  for (const item of items) {
    if (item.deleted_at) continue;
    try {
      await removeDomain(item);
    } catch (error) {
      if (!(isApiError(error) && error.code === 'DOMAIN_NOT_FOUND')) throw error;
    }
  }
}

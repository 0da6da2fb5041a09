import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { getDomainItem, setDomainFieldsIf, type DomainItem } from './records.ts';
import type { ExpressionValues } from '../db/item.ts';

/**
 * The TLS fields of a domain item (its attempts, the distribution and certificate they made) and the
 * platform's number counters for pull zones and DNS zones. Every write names the attempt it belongs to
 * (`ssl_attempts`), so a retry-ssl or a later message wins over a stale one.
 */

/** Sets fields of the domain if it is still on attempt `attempts`, live and verified; null when it moved on. */
export function writeIfCurrent(
  domainId: string,
  attempts: number,
  fields: Partial<DomainItem>,
  extra: { add?: boolean; notIssued?: boolean } = {},
): Promise<DomainItem | null> {
  const names: Record<string, string> = { '#status_now': 'status', '#attempts': 'ssl_attempts' };
  const values: ExpressionValues = { ':attempts': attempts, ':verified': 'verified', ':null': 'NULL' };
  if (extra.notIssued) {
    names['#ssl'] = 'ssl_status';
    values[':issued'] = 'issued';
  }
  if (extra.add) values[':one'] = 1;
  return setDomainFieldsIf(
    domainId,
    fields,
    {
      expression: `attribute_exists(pk) AND #status_now = :verified AND #attempts = :attempts AND attribute_type(deleted_at, :null)${extra.notIssued ? ' AND #ssl <> :issued' : ''}`,
      names,
      values,
    },
    extra.add ? ['#attempts = #attempts + :one'] : [],
  );
}

/** The next integer pull_zone_id: one atomic counter, so two distributions never share a number. */
export async function nextPullZoneNumber(): Promise<number> {
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.pullZoneCounter(),
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'value' },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(reply.Attributes!.value);
}

/**
 * Records the distribution on the domain once: the write is conditional on
 * the domain having none, so a racing attempt cannot give it a second pull
 * zone id. Returns the item as it stands after.
 */
export async function recordDistribution(domainId: string, distributionId: string): Promise<DomainItem> {
  const pullZoneId = await nextPullZoneNumber();
  const recorded = await setDomainFieldsIf(
    domainId,
    { distribution_id: distributionId, pull_zone_id: pullZoneId },
    {
      expression: 'attribute_exists(pk) AND (attribute_not_exists(distribution_id) OR attribute_type(distribution_id, :null))',
      values: { ':null': 'NULL' },
    },
  );
  return recorded ?? (await getDomainItem(domainId))!;
}

/**
 * Claims look number `check` at a pending attempt: `ssl_check_seq` (internal)
 * only grows, so SQS delivering one look twice runs it once and the looks do
 * not multiply into parallel chains.
 */
export function claimCheck(domainId: string, attempts: number, check: number): Promise<DomainItem | null> {
  return setDomainFieldsIf(
    domainId,
    { ssl_check_seq: check },
    {
      expression:
        'attribute_exists(pk) AND ssl_attempts = :attempts AND ssl_status = :provisioning AND attribute_type(deleted_at, :null) AND (attribute_not_exists(ssl_check_seq) OR ssl_check_seq < :check)',
      values: { ':check': check, ':attempts': attempts, ':provisioning': 'provisioning', ':null': 'NULL' },
    },
  );
}

/** Clears an internal field of a removed domain's item once what it named is gone. */
export async function clearRemovedField(
  domainId: string,
  field: 'distribution_id' | 'certificate_arn' | 'ssl_validation_record',
): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.domain(domainId),
      UpdateExpression: 'SET #f = :null',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#f': field },
      ExpressionAttributeValues: { ':null': null },
    }),
  );
}

/** The next integer zone id: one atomic counter, so two zones never share a number. */
export async function nextZoneNumber(): Promise<number> {
  const reply = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.dnsZoneCounter(),
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'value' },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(reply.Attributes!.value);
}

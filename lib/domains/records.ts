import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { type ExpressionValues, getItem, type Stored, type TableKey } from '../db/item.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { setFields } from '../db/set-fields.ts';
import { type NamedWrite, TransactionRefused, refusedAt, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { DOMAIN_CHANGED, DOMAIN_NOT_FOUND, DOMAIN_TAKEN } from '../errors/catalogue/domains.ts';
import { getProjectItem, primaryDomainCleared, primaryDomainIsNot, projectIsActive } from '../projects/records.ts';
import { REMOVED_DOMAIN_RETENTION_DAYS, type DomainRecord, type DomainStatus } from './domains.ts';

/**
 * The domain item: its record, the project's listing keys (gsi1, dropped on removal), the TTL a removal sets and
 * `ssl_check_seq`, which look at a pending certificate claimed the attempt (internal, lib/domains/tls-records.ts).
 */
export type DomainItem = Stored<DomainRecord & { type: 'domain'; ttl?: number; ssl_check_seq?: number }>;

/** A hostname's platform-wide claim: which domain holds it. */
export type HostnameClaim = TableKey & { type: 'domain_host'; domain_id: string; project_id: string; team_id: string };

/**
 * The records of custom domains: the domain item (indexed by project until it is removed) and the
 * hostname claim that makes a hostname one domain's. Adding claims the hostname by a conditional write;
 * removing releases it in the same transaction that marks the domain removed.
 */

/**
 * The domain is still this project's, verified and not removed (`primary_domain`): a project's settings
 * save that makes it the primary domain carries it, so a removal racing the save wins.
 */
export function domainQualifiesAsPrimary(domainId: string, projectId: string): NamedWrite {
  return {
    name: 'primary_domain',
    write: {
      ConditionCheck: {
        Key: keys.domain(domainId),
        ConditionExpression: 'project_id = :project AND #domainStatus = :verified AND attribute_type(deleted_at, :nullType)',
        ExpressionAttributeNames: { '#domainStatus': 'status' },
        ExpressionAttributeValues: { ':project': projectId, ':verified': 'verified', ':nullType': 'NULL' },
      },
    },
  };
}

/**
 * Stores a new domain and its hostname claim in one transaction that also
 * checks the project is still active. Two racing adds of one hostname: the
 * claim's condition lets exactly one through, the other gets DOMAIN_TAKEN.
 */
export async function insertDomain(record: DomainRecord): Promise<void> {
  const claim = {
    ...keys.domainHost(record.domain),
    type: 'domain_host',
    domain_id: record.id,
    project_id: record.project_id,
    team_id: record.team_id,
  };
  const item = {
    ...keys.domain(record.id),
    ...keys.domainByProject(record.project_id, record.created_at, record.id),
    type: 'domain',
    ...record,
  };
  try {
    await transact([
      {
        name: 'hostname',
        write: { Put: { Item: claim, ConditionExpression: 'attribute_not_exists(pk)' } },
        refusal: () => new ApiError(DOMAIN_TAKEN, { details: { domain: record.domain } }),
      },
      { name: 'domain', write: { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } } },
      projectIsActive(record.project_id, () => new ApiError(PROJECT_NOT_FOUND)),
    ]);
  } catch (error) {
    // A racing transaction on the same items: the caller may retry and then learns who won.
    if (error instanceof TransactionRefused) throw new ApiError(DOMAIN_CHANGED);
    throw error;
  }
}

/** The hostname claim released (`hostname`), where it is still this domain's. */
function hostnameRelease(record: Pick<DomainRecord, 'id' | 'domain'>): NamedWrite {
  return {
    name: 'hostname',
    write: {
      Delete: {
        Key: keys.domainHost(record.domain),
        ConditionExpression: 'domain_id = :id',
        ExpressionAttributeValues: { ':id': record.id },
      },
    },
  };
}

/** Undoes insertDomain when what follows it (the managed zone) failed, so the hostname is free again. */
export async function discardDomain(record: Pick<DomainRecord, 'id' | 'domain'>): Promise<void> {
  await transact([hostnameRelease(record), { name: 'domain', write: { Delete: { Key: keys.domain(record.id) } } }]);
}

export function getDomainItem(domainId: string): Promise<DomainItem | null> {
  return getItem<DomainItem>(keys.domain(domainId), true);
}

/** The platform-wide claim of a hostname: which domain holds it. */
export function getHostnameClaim(hostname: string): Promise<HostnameClaim | null> {
  return getItem<HostnameClaim>(keys.domainHost(hostname));
}

/** A project's domain items, oldest first, from the project's index partition (removed ones have left it). */
export function projectDomainItems(projectId: string): Promise<DomainItem[]> {
  return queryAll<DomainItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.domainByProject(projectId, '', '').gsi1pk },
  });
}

/** A condition on the domain item, with the attribute names and values its expression uses. */
export interface DomainCondition {
  expression: string;
  names?: Record<string, string>;
  values?: ExpressionValues;
}

/**
 * Sets `fields` of the domain (and the SET clauses of `alsoSet`, which may use the condition's names and
 * values) where `condition` holds. Returns the item after the write, or null when the condition failed.
 */
export async function setDomainFieldsIf(
  domainId: string,
  fields: Partial<DomainItem>,
  condition: DomainCondition,
  alsoSet: string[] = [],
): Promise<DomainItem | null> {
  const names: Record<string, string> = { ...condition.names };
  const values: ExpressionValues = { ...condition.values };
  const sets = setFields(fields, names, values);
  try {
    const reply = await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.domain(domainId),
        UpdateExpression: `SET ${[...sets, ...alsoSet].join(', ')}`,
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return reply.Attributes as DomainItem;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return null;
    throw error;
  }
}

/**
 * Sets fields of a live domain whose status is still `expected` (a verification
 * racing a removal or another verification must not write over it). Returns
 * the item after the write; throws DOMAIN_CHANGED when the condition failed.
 */
export async function updateDomain(domainId: string, expected: DomainStatus, fields: Partial<DomainRecord>): Promise<DomainItem> {
  const item = await setDomainFieldsIf(domainId, fields, {
    expression: 'attribute_exists(pk) AND #status_now = :expected AND attribute_type(deleted_at, :null)',
    names: { '#status_now': 'status' },
    values: { ':expected': expected, ':null': 'NULL' },
  });
  if (!item) throw new ApiError(DOMAIN_CHANGED);
  return item;
}

/** The domain removed (`domain`, once), its hostname claim released (`hostname`). */
function removalWrites(record: Pick<DomainRecord, 'id' | 'domain'>, now: Date): NamedWrite[] {
  const at = now.toISOString();
  return [
    {
      name: 'domain',
      write: {
        Update: {
          Key: keys.domain(record.id),
          UpdateExpression: 'SET deleted_at = :at, updated_at = :at, #ttl = :ttl REMOVE gsi1pk, gsi1sk',
          ConditionExpression: 'attribute_exists(pk) AND attribute_type(deleted_at, :null)',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':at': at, ':null': 'NULL', ':ttl': epochSeconds(now) + REMOVED_DOMAIN_RETENTION_DAYS * 86_400 },
        },
      },
      refusal: () => new ApiError(DOMAIN_NOT_FOUND),
    },
    hostnameRelease(record),
  ];
}

/**
 * Removes a domain: `deleted_at` set and the project index keys dropped (so
 * listings skip it), and the hostname claim released, in one transaction. The
 * item expires later by TTL.
 *
 * The same transaction keeps the project's primary domain honest: when the
 * project names this domain as `primary_domain_id`, it is cleared (with its
 * hostname) on the condition that it still is this domain; otherwise a check
 * that it still is not. A settings save racing the removal (it checks the
 * domain is not removed) therefore loses cleanly to it or makes it try again.
 */
export async function markDomainRemoved(record: Pick<DomainRecord, 'id' | 'domain' | 'project_id'>, now: Date): Promise<DomainItem> {
  for (let attempt = 1; ; attempt++) {
    const project = await getProjectItem(record.project_id, true);
    const primary =
      project?.primary_domain_id === record.id
        ? primaryDomainCleared(record.project_id, record.id, now.toISOString())
        : primaryDomainIsNot(record.project_id, record.id);
    try {
      await transact([...removalWrites(record, now), primary]);
      break;
    } catch (error) {
      // The project's primary domain changed between the read and the write: read it again.
      if (refusedAt(error, 'project') && attempt < 3) continue;
      if (refusedAt(error, 'project')) throw new ApiError(DOMAIN_CHANGED);
      throw error;
    }
  }
  return (await getDomainItem(record.id))!;
}

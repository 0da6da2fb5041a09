import { randomBytes, randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { conditionFailedAt, isConditionalCheckFailure, isTransactionCanceled } from '../db/errors.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { ApiError } from '../errors/api-error.ts';
import { DOMAIN_CHANGED, DOMAIN_NOT_FOUND, DOMAIN_TAKEN, PROJECT_NOT_FOUND } from '../errors/catalogue.ts';
import { projectActiveCheck } from '../projects/active-check.ts';

export const CONNECTION_MODES = ['byo_dns', 'managed_dns'] as const;
export const DOMAIN_STATUSES = ['pending_verification', 'verified', 'failed', 'awaiting_delegation'] as const;
export const SSL_STATUSES = ['pending', 'provisioning', 'issued', 'failed'] as const;
export const GEO_MODES = ['off', 'allowlist', 'blocklist'] as const;

export type ConnectionMode = (typeof CONNECTION_MODES)[number];
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];
export type SslStatus = (typeof SSL_STATUSES)[number];

/** The TXT record a byo_dns domain proves ownership with lives at this label under the hostname. */
export const VERIFICATION_LABEL = '_slipway-challenge';

/** A removed domain's item stays this long (its id still answers 404, its history is kept for support), then TTL deletes it. */
const REMOVED_DOMAIN_RETENTION_DAYS = 30;

export interface DnsRecord {
  name: string;
  type: 'CNAME' | 'ALIAS' | 'TXT';
  value: string;
  note: string;
}

/** What the table holds of a domain: the spec's fields that are state, plus the Route 53 zone id. */
export interface DomainRecord {
  id: string;
  team_id: string;
  project_id: string;
  domain: string;
  is_apex: boolean;
  connection_mode: ConnectionMode;
  status: DomainStatus;
  verification_token: string;
  verified_at: string | null;
  last_verification_attempt: string | null;
  ns_delegated_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The project's production hostname when the domain was added: the target of its CNAME or ALIAS. */
  target: string;
  ssl_status: SslStatus;
  ssl_attempts: number;
  ssl_error: string | null;
  ssl_error_code: string | null;
  ssl_issued_at: string | null;
  ssl_last_attempt_at: string | null;
  ssl_provisioning_started_at: string | null;
  ssl_next_retry_at: string | null;
  /** ACM's ARN of the domain's current certificate (requested, pending or issued); internal. */
  certificate_arn: string | null;
  /** The DNS validation record of that certificate (shown in dns_records for byo_dns). */
  ssl_validation_record: { name: string; value: string } | null;
  geo_mode: (typeof GEO_MODES)[number];
  geo_countries: string[];
  pull_zone_id: number | null;
  cdn_dns_ns1: string | null;
  cdn_dns_ns2: string | null;
  cdn_dns_zone_id: number | null;
  /** Route 53's id of the managed zone; internal. */
  hosted_zone_id: string | null;
  /** CloudFront's id of the domain's own distribution (the pull zone); internal. */
  distribution_id: string | null;
  /** Bumped by every saved geo policy (lib/domains/geo.ts); internal. */
  geo_revision?: number;
  /** The geo_revision last set on the distribution, and when; behind geo_revision means saved but not applied. Internal. */
  geo_applied_revision?: number | null;
  geo_applied_at?: string | null;
}

/** A domain as the API returns it: every field of the spec's Domain table, with its presence rules. */
export type Domain = Omit<
  DomainRecord,
  | 'target'
  | 'hosted_zone_id'
  | 'ssl_next_retry_at'
  | 'certificate_arn'
  | 'ssl_validation_record'
  | 'distribution_id'
  | 'geo_revision'
  | 'geo_applied_revision'
  | 'geo_applied_at'
> & {
  dns_records: DnsRecord[];
  next_retry_at?: string;
  debug_url?: string;
  supports_geo_filtering: boolean;
};

/**
 * The records the customer's DNS must hold. A CNAME cannot sit at a zone apex
 * (it would shadow the zone's SOA and NS), so an apex gets an ALIAS (ANAME,
 * flattened CNAME) to the same target. With managed DNS the platform's zone
 * holds the routing record; the customer only delegates.
 */
export function dnsRecordsOf(
  record: Pick<DomainRecord, 'domain' | 'is_apex' | 'connection_mode' | 'verification_token' | 'target'> & {
    ssl_validation_record?: DomainRecord['ssl_validation_record'];
  },
): DnsRecord[] {
  const routing: DnsRecord = record.is_apex
    ? {
        name: record.domain,
        type: 'ALIAS',
        value: record.target,
        note: 'The apex of a zone cannot hold a CNAME: create an ALIAS (also called ANAME or CNAME flattening) record pointing at this target.',
      }
    : {
        name: record.domain,
        type: 'CNAME',
        value: record.target,
        note: 'Create a CNAME record for this hostname pointing at this target; remove any A or AAAA records it has.',
      };
  if (record.connection_mode === 'managed_dns') {
    return [
      {
        ...routing,
        note: 'Served from the hosted zone Slipway manages for this domain, where Slipway adds it once the domain has its distribution: create nothing at your DNS provider. Set the name servers at your registrar to cdn_dns_ns1 and cdn_dns_ns2.',
      },
    ];
  }
  const validation = record.ssl_validation_record;
  return [
    routing,
    {
      name: `${VERIFICATION_LABEL}.${record.domain}`,
      type: 'TXT',
      value: record.verification_token,
      note: 'Proves that you control this domain. Create this TXT record, then ask for verification; keep it while the domain is connected.',
    },
    // Once the certificate is requested: ACM validates it (and later renews it) by this record in the customer's DNS.
    ...(validation
      ? [
          {
            name: validation.name.replace(/\.$/, ''),
            type: 'CNAME' as const,
            value: validation.value.replace(/\.$/, ''),
            note: "Lets the certificate authority issue this domain's SSL certificate. Create this CNAME record and keep it: the certificate is renewed through it.",
          },
        ]
      : []),
  ];
}

/** The external certificate diagnostic, pre-filled with the hostname (the spec's debug_url). */
export const certificateDebugUrl = (hostname: string) =>
  `https://www.ssllabs.com/ssltest/analyze.html?d=${encodeURIComponent(hostname)}&hideResults=on`;

/** The API shape of a stored domain item: every spec field in table order, next_retry_at and debug_url only when their rule holds. */
export function toDomain(item: Record<string, unknown>): Domain {
  const r = item as unknown as DomainRecord;
  const sslUnresolved = r.ssl_status !== 'issued';
  return {
    id: r.id,
    team_id: r.team_id,
    project_id: r.project_id,
    domain: r.domain,
    is_apex: r.is_apex,
    connection_mode: r.connection_mode,
    status: r.status,
    verification_token: r.verification_token,
    verified_at: r.verified_at ?? null,
    last_verification_attempt: r.last_verification_attempt ?? null,
    ns_delegated_at: r.ns_delegated_at ?? null,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at ?? null,
    dns_records: dnsRecordsOf(r),
    ssl_status: r.ssl_status,
    ssl_attempts: r.ssl_attempts ?? 0,
    ssl_error: r.ssl_error ?? null,
    ssl_error_code: r.ssl_error_code ?? null,
    ssl_issued_at: r.ssl_issued_at ?? null,
    ssl_last_attempt_at: r.ssl_last_attempt_at ?? null,
    ssl_provisioning_started_at: r.ssl_provisioning_started_at ?? null,
    ...(r.ssl_status === 'failed' && r.ssl_next_retry_at ? { next_retry_at: r.ssl_next_retry_at } : {}),
    ...(sslUnresolved ? { debug_url: certificateDebugUrl(r.domain) } : {}),
    geo_mode: r.geo_mode ?? 'off',
    geo_countries: r.geo_countries ?? [],
    // Geo rules are the restriction of the domain's own distribution: none until it has one.
    supports_geo_filtering: r.distribution_id != null,
    pull_zone_id: r.pull_zone_id ?? null,
    cdn_dns_ns1: r.cdn_dns_ns1 ?? null,
    cdn_dns_ns2: r.cdn_dns_ns2 ?? null,
    cdn_dns_zone_id: r.cdn_dns_zone_id ?? null,
  };
}

/** The spec's retry-ssl subset: the domain without debug_url, dns_records, is_apex, next_retry_at and supports_geo_filtering. */
export type RetrySslDomain = Omit<Domain, 'debug_url' | 'dns_records' | 'is_apex' | 'next_retry_at' | 'supports_geo_filtering'>;

export function toRetrySslDomain(item: Record<string, unknown>): RetrySslDomain {
  const {
    debug_url: _debug,
    dns_records: _records,
    is_apex: _apex,
    next_retry_at: _next,
    supports_geo_filtering: _geo,
    ...rest
  } = toDomain(item);
  return rest;
}

export function newDomainRecord(input: {
  teamId: string;
  projectId: string;
  hostname: string;
  isApex: boolean;
  mode: ConnectionMode;
  target: string;
  now: string;
}): DomainRecord {
  return {
    id: randomUUID(),
    team_id: input.teamId,
    project_id: input.projectId,
    domain: input.hostname,
    is_apex: input.isApex,
    connection_mode: input.mode,
    // Managed DNS proves control by delegation to our name servers; there is no token record to look for.
    status: input.mode === 'managed_dns' ? 'awaiting_delegation' : 'pending_verification',
    verification_token: `slipway-verify-${randomBytes(16).toString('hex')}`,
    verified_at: null,
    last_verification_attempt: null,
    ns_delegated_at: null,
    created_at: input.now,
    updated_at: input.now,
    deleted_at: null,
    target: input.target,
    ssl_status: 'pending',
    ssl_attempts: 0,
    ssl_error: null,
    ssl_error_code: null,
    ssl_issued_at: null,
    ssl_last_attempt_at: null,
    ssl_provisioning_started_at: null,
    ssl_next_retry_at: null,
    certificate_arn: null,
    ssl_validation_record: null,
    geo_mode: 'off',
    geo_countries: [],
    // The dedicated distribution comes once the domain is verified (TLS), so there is none yet.
    pull_zone_id: null,
    cdn_dns_ns1: null,
    cdn_dns_ns2: null,
    cdn_dns_zone_id: null,
    hosted_zone_id: null,
    distribution_id: null,
  };
}

/**
 * Stores a new domain and its hostname claim in one transaction that also
 * checks the project is still active. Two racing adds of one hostname: the
 * claim's condition lets exactly one through, the other gets DOMAIN_TAKEN.
 */
export async function insertDomain(record: DomainRecord): Promise<void> {
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: config.tableName(),
              Item: {
                ...keys.domainHost(record.domain),
                type: 'domain_host',
                domain_id: record.id,
                project_id: record.project_id,
                team_id: record.team_id,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: config.tableName(),
              Item: {
                ...keys.domain(record.id),
                ...keys.domainByProject(record.project_id, record.created_at, record.id),
                type: 'domain',
                ...record,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          projectActiveCheck(record.project_id),
        ],
      }),
    );
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    if (conditionFailedAt(error, 0)) throw new ApiError(DOMAIN_TAKEN, { details: { domain: record.domain } });
    if (conditionFailedAt(error, 2)) throw new ApiError(PROJECT_NOT_FOUND);
    // A racing transaction on the same items: the caller may retry and then learns who won.
    throw new ApiError(DOMAIN_CHANGED);
  }
}

/** Undoes insertDomain when what follows it (the managed zone) failed, so the hostname is free again. */
export async function discardDomain(record: Pick<DomainRecord, 'id' | 'domain'>): Promise<void> {
  await dynamo().send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Delete: {
            TableName: config.tableName(),
            Key: keys.domainHost(record.domain),
            ConditionExpression: 'domain_id = :id',
            ExpressionAttributeValues: { ':id': record.id },
          },
        },
        { Delete: { TableName: config.tableName(), Key: keys.domain(record.id) } },
      ],
    }),
  );
}

export async function getDomainItem(domainId: string): Promise<Record<string, unknown> | null> {
  const reply = await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.domain(domainId), ConsistentRead: true }));
  return reply.Item ?? null;
}

/** A project's domains, oldest first, from the project's index partition (removed ones have left it). */
export async function listProjectDomains(projectId: string): Promise<Domain[]> {
  const items = await queryAll({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.domainByProject(projectId, '', '').gsi1pk },
  });
  return items.filter((item) => !item.deleted_at).map(toDomain);
}

/**
 * Sets fields of a live domain whose status is still `expected` (a verification
 * racing a removal or another verification must not write over it). Returns
 * the item after the write; throws DOMAIN_CHANGED when the condition failed.
 */
export async function updateDomain(
  domainId: string,
  expected: DomainStatus,
  fields: Partial<DomainRecord>,
): Promise<Record<string, unknown>> {
  const names: Record<string, string> = { '#status_now': 'status' };
  const values: Record<string, unknown> = { ':expected': expected };
  const sets = Object.entries(fields).map(([field, value], i) => {
    names[`#f${i}`] = field;
    values[`:v${i}`] = value;
    return `#f${i} = :v${i}`;
  });
  try {
    const reply = await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.domain(domainId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk) AND #status_now = :expected AND attribute_type(deleted_at, :null)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ':null': 'NULL' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return reply.Attributes!;
  } catch (error) {
    if (isConditionalCheckFailure(error)) throw new ApiError(DOMAIN_CHANGED);
    throw error;
  }
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
export async function markDomainRemoved(
  record: Pick<DomainRecord, 'id' | 'domain' | 'project_id'>,
  now: Date,
): Promise<Record<string, unknown>> {
  const at = now.toISOString();
  const table = config.tableName();
  for (let attempt = 1; ; attempt++) {
    const project = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(record.project_id), ConsistentRead: true })))
      .Item;
    const isPrimary = project?.primary_domain_id === record.id;
    const projectItem = isPrimary
      ? {
          Update: {
            TableName: table,
            Key: keys.project(record.project_id),
            UpdateExpression: 'SET primary_domain_id = :none, primary_domain_hostname = :none, updated_at = :at',
            ConditionExpression: 'primary_domain_id = :id',
            ExpressionAttributeValues: { ':none': null, ':at': at, ':id': record.id },
          },
        }
      : {
          ConditionCheck: {
            TableName: table,
            Key: keys.project(record.project_id),
            ConditionExpression:
              'attribute_not_exists(pk) OR attribute_not_exists(primary_domain_id) OR attribute_type(primary_domain_id, :nullType) OR primary_domain_id <> :id',
            ExpressionAttributeValues: { ':nullType': 'NULL', ':id': record.id },
          },
        };
    try {
      await dynamo().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: keys.domain(record.id),
                UpdateExpression: 'SET deleted_at = :at, updated_at = :at, #ttl = :ttl REMOVE gsi1pk, gsi1sk',
                ConditionExpression: 'attribute_exists(pk) AND attribute_type(deleted_at, :null)',
                ExpressionAttributeNames: { '#ttl': 'ttl' },
                ExpressionAttributeValues: {
                  ':at': at,
                  ':null': 'NULL',
                  ':ttl': epochSeconds(now) + REMOVED_DOMAIN_RETENTION_DAYS * 86_400,
                },
              },
            },
            {
              Delete: {
                TableName: table,
                Key: keys.domainHost(record.domain),
                ConditionExpression: 'domain_id = :id',
                ExpressionAttributeValues: { ':id': record.id },
              },
            },
            projectItem as never,
          ],
        }),
      );
      break;
    } catch (error) {
      // Another removal got there first.
      if (isTransactionCanceled(error) && conditionFailedAt(error, 0)) throw new ApiError(DOMAIN_NOT_FOUND);
      // The project's primary domain changed between the read and the write: read it again.
      if (isTransactionCanceled(error) && conditionFailedAt(error, 2) && attempt < 3) continue;
      if (isTransactionCanceled(error) && conditionFailedAt(error, 2)) throw new ApiError(DOMAIN_CHANGED);
      throw error;
    }
  }
  return (await getDomainItem(record.id))!;
}

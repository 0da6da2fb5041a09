import { randomBytes, randomUUID } from 'node:crypto';

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
export const REMOVED_DOMAIN_RETENTION_DAYS = 30;

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
export function toDomain(item: DomainRecord): Domain {
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

export function toRetrySslDomain(item: DomainRecord): RetrySslDomain {
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

import { createHash } from 'node:crypto';
import {
  DeleteCertificateCommand,
  DescribeCertificateCommand,
  RequestCertificateCommand,
  type CertificateDetail,
} from '@aws-sdk/client-acm';
import {
  CreateDistributionWithTagsCommand,
  DeleteDistributionCommand,
  GetDistributionCommand,
  GetDistributionConfigCommand,
  ListDistributionsCommand,
  UpdateDistributionCommand,
} from '@aws-sdk/client-cloudfront';
import { ChangeResourceRecordSetsCommand, type ResourceRecordSet } from '@aws-sdk/client-route-53';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { acm } from '../aws/acm.ts';
import { cloudfront } from '../aws/cloudfront.ts';
import { route53 } from '../aws/route53.ts';
import { sqs } from '../aws/sqs.ts';
import { CUSTOM_HOST_HEADER } from '../sites/hostname.ts';
import { config } from '../config.ts';
import { logger } from '../logger.ts';
import { type DomainRecord } from './domains.ts';
import { getDomainItem } from './records.ts';
import { applyGeoPolicyToNewDistribution } from './geo.ts';
import { claimAttempt, SSL_ERROR_CODES, type SslErrorCode } from './tls-attempts.ts';
import { claimCheck, clearRemovedField, recordDistribution, writeIfCurrent } from './tls-records.ts';
import { sendSslMessage, type SslMessage } from './tls-queue.ts';

/**
 * TLS of a verified custom domain: an ACM certificate for the hostname (DNS
 * validation), then the domain's own CloudFront distribution (the spec's
 * dedicated pull zone) serving the hostname with it. Attempts run from the
 * SSL-retries queue (handlers/workers/ssl-retries.ts); POST /domains/{id}/retry-ssl
 * claims one and queues it there (lib/domains/tls-attempts.ts); docs/domains.md
 * tells the whole story.
 */

// The list of ssl_error_code values lives with the claims (retry-ssl's bundle needs one sentence of it).
export { SSL_ERROR_CODES, type SslErrorCode } from './tls-attempts.ts';

/** The tag that names the domain a distribution was made for. */
export const DOMAIN_ID_TAG = 'slipway:domain-id';

/** The hosted zone id CloudFront's alias targets live in (fixed by AWS for every distribution). */
const CLOUDFRONT_ALIAS_ZONE_ID = 'Z2FDTNDATAQYW2';
/**
 * AWS's managed cache policy "CachingDisabled" and origin request policy
 * "AllViewerExceptHostHeader": a domain's distribution caches nothing itself
 * and passes the path, query and viewer headers on to the sites distribution,
 * which caches by site host and query (infra/site-serving.ts). Caching here
 * too would key a primary-domain 301, kept 30 days, on the path alone.
 */
const CACHING_DISABLED_POLICY_ID = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_POLICY_ID = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

type AttemptMessage = Extract<SslMessage, { kind: 'ssl_attempt' | 'ssl_check' }>;

export type AttemptOutcome = 'issued' | 'provisioning' | 'failed' | 'stale';

/** Delay before retry `n` (1 = the first retry): base, doubling, capped (SQS delays at most 900 s). */
export function retryDelaySeconds(n: number, base = config.sslRetryBaseDelaySeconds(), cap = config.sslRetryMaxDelaySeconds()): number {
  return Math.min(cap, 900, base * 2 ** Math.max(0, n - 1));
}

const send = sendSslMessage;

const deadLetterUrls = new Map<string, string>();
/** The dead-letter queue the SSL-retries queue's own redrive policy names (found once per container). */
async function deadLetterQueueUrl(): Promise<string> {
  const source = config.queueUrl('sslRetries');
  const known = deadLetterUrls.get(source);
  if (known) return known;
  const attributes = await sqs().send(new GetQueueAttributesCommand({ QueueUrl: source, AttributeNames: ['RedrivePolicy'] }));
  const arn = (JSON.parse(attributes.Attributes?.RedrivePolicy ?? '{}') as { deadLetterTargetArn?: string }).deadLetterTargetArn;
  if (!arn) throw new Error('The SSL-retries queue has no dead-letter queue');
  const [, , , , account, name] = arn.split(':');
  const { QueueUrl } = await sqs().send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }));
  deadLetterUrls.set(source, QueueUrl!);
  return QueueUrl!;
}

class AttemptFailure extends Error {
  constructor(
    readonly code: SslErrorCode,
    readonly detail?: string,
  ) {
    super(code);
  }
}

const errorName = (error: unknown) => (error as Error)?.name ?? 'Error';

/** Writes a record set into the managed zone (UPSERT: running twice is harmless). */
async function upsertRecord(hostedZoneId: string, recordSet: ResourceRecordSet): Promise<void> {
  try {
    await route53().send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: hostedZoneId,
        ChangeBatch: { Changes: [{ Action: 'UPSERT', ResourceRecordSet: recordSet }] },
      }),
    );
  } catch (error) {
    throw new AttemptFailure('DNS_RECORD_FAILED', errorName(error));
  }
}

/** ACM's idempotency token: one per attempt, so a retried request inside one attempt returns the same certificate. */
const idempotencyToken = (domainId: string, attempt: number) =>
  createHash('sha256').update(`${domainId}:${attempt}`).digest('hex').slice(0, 32);

async function requestCertificate(record: DomainRecord): Promise<string> {
  try {
    const reply = await acm().send(
      new RequestCertificateCommand({
        DomainName: record.domain,
        ValidationMethod: 'DNS',
        IdempotencyToken: idempotencyToken(record.id, record.ssl_attempts),
        Tags: [{ Key: 'slipway:domain-id', Value: record.id }],
      }),
    );
    return reply.CertificateArn!;
  } catch (error) {
    const name = errorName(error);
    throw new AttemptFailure(name === 'LimitExceededException' ? 'CERTIFICATE_LIMIT_EXCEEDED' : 'CERTIFICATE_REQUEST_FAILED', name);
  }
}

async function describeCertificate(arn: string): Promise<CertificateDetail | null> {
  try {
    return (await acm().send(new DescribeCertificateCommand({ CertificateArn: arn }))).Certificate ?? null;
  } catch (error) {
    if (errorName(error) === 'ResourceNotFoundException') return null;
    throw new AttemptFailure('CERTIFICATE_REQUEST_FAILED', errorName(error));
  }
}

/** A certificate that will never issue is deleted, so the next attempt requests a fresh one. */
async function dropCertificate(domainId: string, attempts: number, arn: string): Promise<void> {
  try {
    await acm().send(new DeleteCertificateCommand({ CertificateArn: arn }));
  } catch (error) {
    if (errorName(error) !== 'ResourceNotFoundException')
      logger.warn('ssl: certificate not deleted', { domain_id: domainId, error: errorName(error) });
  }
  await writeIfCurrent(domainId, attempts, { certificate_arn: null, ssl_validation_record: null });
}

/** The distribution of this hostname, when CloudFront says the caller reference (the domain id) already made one. */
async function findDistributionByAlias(hostname: string): Promise<{ id: string; domainName: string } | null> {
  let marker: string | undefined;
  do {
    const page = await cloudfront().send(new ListDistributionsCommand({ Marker: marker }));
    for (const d of page.DistributionList?.Items ?? []) {
      // A summary carries its aliases; an endpoint whose summaries do not (moto) is asked per distribution.
      const aliases = d.Aliases
        ? d.Aliases.Items
        : (await cloudfront().send(new GetDistributionCommand({ Id: d.Id! }))).Distribution?.DistributionConfig?.Aliases?.Items;
      if (aliases?.includes(hostname)) return { id: d.Id!, domainName: d.DomainName! };
    }
    marker = page.DistributionList?.IsTruncated ? page.DistributionList.NextMarker : undefined;
  } while (marker);
  return null;
}

/** The `slipway:*` tags of a domain's distribution: what the sweep reads to find its record. */
export const distributionTags = (record: Pick<DomainRecord, 'id' | 'project_id' | 'team_id'>) => [
  { Key: DOMAIN_ID_TAG, Value: record.id },
  { Key: 'slipway:project-id', Value: record.project_id },
  { Key: 'slipway:team-id', Value: record.team_id },
];

async function createDistribution(record: DomainRecord, certificateArn: string): Promise<{ id: string; domainName: string }> {
  const originId = 'project-site';
  try {
    const reply = await cloudfront().send(
      new CreateDistributionWithTagsCommand({
        DistributionConfigWithTags: {
          // Which domain it serves: the sweep (lib/sweep.ts) removes a distribution no domain names any more.
          Tags: { Items: distributionTags(record) },
          DistributionConfig: {
            // The domain id: a second creation for the same domain is refused instead of making a twin.
            CallerReference: record.id,
            Comment: `Slipway custom domain ${record.domain}`,
            Enabled: true,
            Aliases: { Quantity: 1, Items: [record.domain] },
            Origins: {
              Quantity: 1,
              Items: [
                {
                  Id: originId,
                  DomainName: record.target,
                  CustomOriginConfig: { HTTPPort: 80, HTTPSPort: 443, OriginProtocolPolicy: 'https-only' },
                  CustomHeaders: { Quantity: 1, Items: [{ HeaderName: CUSTOM_HOST_HEADER, HeaderValue: record.domain }] },
                },
              ],
            },
            DefaultCacheBehavior: {
              TargetOriginId: originId,
              ViewerProtocolPolicy: 'redirect-to-https',
              CachePolicyId: CACHING_DISABLED_POLICY_ID,
              OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_POLICY_ID,
            },
            ViewerCertificate: { ACMCertificateArn: certificateArn, SSLSupportMethod: 'sni-only', MinimumProtocolVersion: 'TLSv1.2_2021' },
          },
        },
      }),
    );
    return { id: reply.Distribution!.Id!, domainName: reply.Distribution!.DomainName! };
  } catch (error) {
    const name = errorName(error);
    if (name === 'DistributionAlreadyExists') {
      const found = await findDistributionByAlias(record.domain);
      if (found) return found;
    }
    throw new AttemptFailure(name === 'CNAMEAlreadyExists' ? 'HOSTNAME_IN_USE' : 'DISTRIBUTION_FAILED', name);
  }
}

type StepResult = { kind: 'issued' } | { kind: 'pending' };

/**
 * The work of an attempt (or of a look at a pending one): the certificate,
 * its validation record in a managed zone, and once ACM has issued it the
 * distribution (and, with managed DNS, the routing record to it).
 */
async function provision(record: DomainRecord): Promise<StepResult> {
  let arn = record.certificate_arn;
  if (!arn) {
    arn = await requestCertificate(record);
    await writeIfCurrent(record.id, record.ssl_attempts, { certificate_arn: arn });
  }
  const certificate = await describeCertificate(arn);
  if (!certificate) {
    await writeIfCurrent(record.id, record.ssl_attempts, { certificate_arn: null, ssl_validation_record: null });
    throw new AttemptFailure('CERTIFICATE_REQUEST_FAILED', 'certificate not found');
  }
  switch (certificate.Status) {
    case 'ISSUED':
      break;
    case 'PENDING_VALIDATION': {
      const rr = certificate.DomainValidationOptions?.find((o) => o.ResourceRecord?.Name && o.ResourceRecord.Value)?.ResourceRecord;
      if (rr) {
        if (record.connection_mode === 'managed_dns' && record.hosted_zone_id) {
          await upsertRecord(record.hosted_zone_id, { Name: rr.Name!, Type: 'CNAME', TTL: 300, ResourceRecords: [{ Value: rr.Value! }] });
        }
        // byo_dns: the customer creates it, from dns_records.
        if (record.ssl_validation_record?.name !== rr.Name || record.ssl_validation_record?.value !== rr.Value) {
          await writeIfCurrent(record.id, record.ssl_attempts, { ssl_validation_record: { name: rr.Name!, value: rr.Value! } });
        }
      }
      // Measured now, after the look: the attempt's claim time comes before the certificate's request.
      const requestedAt = certificate.CreatedAt ?? new Date();
      if (Date.now() - requestedAt.getTime() >= config.sslValidationTimeoutSeconds() * 1000) {
        await dropCertificate(record.id, record.ssl_attempts, arn);
        throw new AttemptFailure('VALIDATION_TIMED_OUT', `not validated within ${config.sslValidationTimeoutSeconds()} s`);
      }
      return { kind: 'pending' };
    }
    case 'VALIDATION_TIMED_OUT':
      await dropCertificate(record.id, record.ssl_attempts, arn);
      throw new AttemptFailure('VALIDATION_TIMED_OUT', 'ACM validation timed out');
    case 'FAILED':
      await dropCertificate(record.id, record.ssl_attempts, arn);
      throw new AttemptFailure(
        certificate.FailureReason === 'CAA_ERROR' ? 'CAA_ERROR' : 'CERTIFICATE_REFUSED',
        certificate.FailureReason ?? 'FAILED',
      );
    default:
      // REVOKED, EXPIRED, INACTIVE: this certificate will not serve; the next attempt requests a new one.
      await dropCertificate(record.id, record.ssl_attempts, arn);
      throw new AttemptFailure('CERTIFICATE_REFUSED', certificate.Status ?? 'unknown');
  }
  let distributionDomain: string | null = null;
  if (!record.distribution_id) {
    const distribution = await createDistribution(record, arn);
    distributionDomain = distribution.domainName;
    const recorded = await recordDistribution(record.id, distribution.id);
    // A policy the domain already holds goes onto its new distribution (a racing twin is the sweep's: lib/sweep.ts).
    if (recorded.distribution_id === distribution.id) await applyGeoPolicyToNewDistribution(recorded);
  }
  if (distributionDomain && record.connection_mode === 'managed_dns' && record.hosted_zone_id) {
    await upsertRecord(
      record.hosted_zone_id,
      record.is_apex
        ? {
            Name: record.domain,
            Type: 'A',
            AliasTarget: { HostedZoneId: CLOUDFRONT_ALIAS_ZONE_ID, DNSName: distributionDomain, EvaluateTargetHealth: false },
          }
        : { Name: record.domain, Type: 'CNAME', TTL: 300, ResourceRecords: [{ Value: distributionDomain }] },
    );
  }
  return { kind: 'issued' };
}

/**
 * Runs one step for a claimed attempt and records what came of it:
 * - issued: `issued`, `ssl_issued_at`;
 * - still validating: stays `provisioning`, and a look again is queued;
 * - failed: `failed` with `ssl_error_code` and `ssl_error`; the next attempt of
 *   the chain is queued with a growing delay (`next_retry_at`), or after the
 *   last one the message goes to the dead-letter queue.
 * Every write is conditional on the attempt still being the domain's latest.
 */
async function runStep(claimed: Record<string, unknown>, chain: number, now: Date, check = 0): Promise<AttemptOutcome> {
  const record = claimed as unknown as DomainRecord;
  const attempts = record.ssl_attempts;
  let result: StepResult;
  try {
    result = await provision(record);
  } catch (caught) {
    // An error of no known kind still ends the attempt as a failure, so the chain goes on: left to SQS, the
    // redelivered message would find its own claim and be dropped as stale, and the domain would stay provisioning.
    const error = caught instanceof AttemptFailure ? caught : new AttemptFailure('PROVISIONING_INTERRUPTED', errorName(caught));
    if (!(caught instanceof AttemptFailure))
      logger.error('ssl attempt interrupted', { domain_id: record.id, error: errorName(caught), message: (caught as Error)?.message });
    const message = error.detail ? `${SSL_ERROR_CODES[error.code]} (${error.detail})` : SSL_ERROR_CODES[error.code];
    const at = new Date().toISOString();
    let nextRetryAt: string | null = null;
    const next: AttemptMessage = { kind: 'ssl_attempt', domain_id: record.id, seen_attempts: attempts, chain: chain + 1 };
    // The message first: a failed send throws and the current message is retried; a queued retry whose write then loses is stale and dropped.
    if (chain < config.sslMaxAttempts()) {
      const delay = retryDelaySeconds(chain);
      await send(next, delay);
      nextRetryAt = new Date(Date.now() + delay * 1000).toISOString();
    } else {
      await sqs().send(
        new SendMessageCommand({
          QueueUrl: await deadLetterQueueUrl(),
          MessageBody: JSON.stringify({ ...next, chain, ssl_error_code: error.code, ssl_error: message }),
        }),
      );
    }
    const written = await writeIfCurrent(
      record.id,
      attempts,
      {
        ssl_status: 'failed',
        ssl_error: message,
        ssl_error_code: error.code,
        ssl_next_retry_at: nextRetryAt,
        updated_at: at,
      },
      { notIssued: true },
    );
    logger.info('ssl attempt failed', {
      domain_id: record.id,
      attempt: attempts,
      chain,
      code: error.code,
      detail: error.detail,
      next_retry_at: nextRetryAt,
    });
    return written ? 'failed' : 'stale';
  }
  if (result.kind === 'pending') {
    await send(
      { kind: 'ssl_check', domain_id: record.id, seen_attempts: attempts, chain, check: check + 1 },
      config.sslCheckIntervalSeconds(),
    );
    return 'provisioning';
  }
  const at = new Date().toISOString();
  const written = await writeIfCurrent(record.id, attempts, {
    ssl_status: 'issued',
    ssl_issued_at: at,
    ssl_error: null,
    ssl_error_code: null,
    ssl_next_retry_at: null,
    updated_at: at,
  });
  logger.info('ssl issued', { domain_id: record.id, attempt: attempts });
  return written ? 'issued' : 'stale';
}

/**
 * A new attempt on the domain as `item` shows it: claimed (one of racing
 * claims wins; the others are 'stale'), then run. `chain` is its number in
 * its automatic chain (1 for the first after verification; retry-ssl claims
 * attempt 1 of its chain itself, in lib/domains/tls-attempts.ts).
 */
export async function attemptTls(
  item: Record<string, unknown>,
  chain = 1,
  now = new Date(),
): Promise<{ outcome: AttemptOutcome; item: Record<string, unknown> }> {
  const claimed = await claimAttempt(item, now);
  if (!claimed) return { outcome: 'stale', item: (await getDomainItem(item.id as string)) ?? item };
  const outcome = await runStep(claimed, chain, now);
  return { outcome, item: (await getDomainItem(item.id as string)) ?? claimed };
}

/** What the worker does with one message of the SSL-retries queue. */
export async function handleSslMessage(message: SslMessage, now = new Date()): Promise<AttemptOutcome | TeardownOutcome | 'gone'> {
  if (message.kind === 'ssl_teardown') return teardownTls(message.domain_id);
  const item = await getDomainItem(message.domain_id);
  if (!item || item.deleted_at || item.status !== 'verified') return 'gone';
  // A retry-ssl or another message moved the domain on since this one was sent.
  if (Number(item.ssl_attempts ?? 0) !== message.seen_attempts || item.ssl_status === 'issued') return 'stale';
  if (message.kind === 'ssl_check') {
    if (item.ssl_status !== 'provisioning') return 'stale';
    const check = message.check ?? 1;
    const claimed = await claimCheck(message.domain_id, message.seen_attempts, check);
    if (!claimed) return 'stale';
    return runStep(claimed, message.chain, now, check);
  }
  return (await attemptTls(item, message.chain, now)).outcome;
}

export type TeardownOutcome = 'torn_down' | 'waiting';

/**
 * Takes down what TLS made for a removed domain: CloudFront deletes only a
 * disabled distribution whose change is deployed, so the first pass disables
 * it and the message comes back every SSL_CHECK_INTERVAL_SECONDS until it can
 * be deleted; then the certificate (no longer in use) goes. Safe to run again.
 */
export async function teardownTls(domainId: string): Promise<TeardownOutcome | 'gone'> {
  const item = await getDomainItem(domainId);
  // Only a removed domain is torn down; a live one (or an expired item) is left alone.
  if (!item || !item.deleted_at) return 'gone';
  const again = async () => {
    await send({ kind: 'ssl_teardown', domain_id: domainId }, config.sslCheckIntervalSeconds());
    return 'waiting' as const;
  };
  const distributionId = item.distribution_id as string | null;
  if (distributionId) {
    try {
      const current = await cloudfront().send(new GetDistributionConfigCommand({ Id: distributionId }));
      if (current.DistributionConfig!.Enabled) {
        await cloudfront().send(
          new UpdateDistributionCommand({
            Id: distributionId,
            IfMatch: current.ETag,
            DistributionConfig: { ...current.DistributionConfig!, Enabled: false },
          }),
        );
        return again();
      }
      const state = await cloudfront().send(new GetDistributionCommand({ Id: distributionId }));
      if (state.Distribution!.Status !== 'Deployed') return again();
      await cloudfront().send(new DeleteDistributionCommand({ Id: distributionId, IfMatch: state.ETag }));
    } catch (error) {
      if (errorName(error) !== 'NoSuchDistribution') throw error;
    }
    await clearRemovedField(domainId, 'distribution_id');
  }
  const certificateArn = item.certificate_arn as string | null;
  if (certificateArn) {
    try {
      await acm().send(new DeleteCertificateCommand({ CertificateArn: certificateArn }));
    } catch (error) {
      // CloudFront lets go of the certificate a little after the distribution is deleted.
      if (errorName(error) === 'ResourceInUseException') return again();
      if (errorName(error) !== 'ResourceNotFoundException') throw error;
    }
    await clearRemovedField(domainId, 'certificate_arn');
  }
  return 'torn_down';
}

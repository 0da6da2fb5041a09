import { ChangeResourceRecordSetsCommand, type ResourceRecordSet } from '@aws-sdk/client-route-53';
import { route53 } from '../aws/route53.ts';
import { config } from '../config.ts';
import type { DomainRecord } from './domains.ts';
import { applyGeoPolicyToNewDistribution } from './geo.ts';
import { describeCertificate, dropCertificate, requestCertificate } from './tls-certificate.ts';
import { createDistribution } from './tls-distribution.ts';
import { AttemptFailure, errorName } from './tls-failure.ts';
import { recordDistribution, writeIfCurrent } from './tls-records.ts';

/** The hosted zone id CloudFront's alias targets live in (fixed by AWS for every distribution). */
const CLOUDFRONT_ALIAS_ZONE_ID = 'Z2FDTNDATAQYW2';

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

export type StepResult = { kind: 'issued' } | { kind: 'pending' };

/**
 * The work of an attempt (or of a look at a pending one): the certificate,
 * its validation record in a managed zone, and once ACM has issued it the
 * distribution (and, with managed DNS, the routing record to it).
 */
export async function provision(record: DomainRecord): Promise<StepResult> {
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

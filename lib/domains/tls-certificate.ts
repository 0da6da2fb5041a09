import { createHash } from 'node:crypto';
import {
  DeleteCertificateCommand,
  DescribeCertificateCommand,
  RequestCertificateCommand,
  type CertificateDetail,
} from '@aws-sdk/client-acm';
import { acm } from '../aws/acm.ts';
import { logger } from '../logger.ts';
import type { DomainRecord } from './domains.ts';
import { AttemptFailure, errorName } from './tls-failure.ts';
import { writeIfCurrent } from './tls-records.ts';

/** The ACM certificate of a domain's TLS attempt (DNS validation): requested once per attempt, described, dropped. */

/** ACM's idempotency token: one per attempt, so a retried request inside one attempt returns the same certificate. */
const idempotencyToken = (domainId: string, attempt: number) =>
  createHash('sha256').update(`${domainId}:${attempt}`).digest('hex').slice(0, 32);

export async function requestCertificate(record: DomainRecord): Promise<string> {
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

export async function describeCertificate(arn: string): Promise<CertificateDetail | null> {
  try {
    return (await acm().send(new DescribeCertificateCommand({ CertificateArn: arn }))).Certificate ?? null;
  } catch (error) {
    if (errorName(error) === 'ResourceNotFoundException') return null;
    throw new AttemptFailure('CERTIFICATE_REQUEST_FAILED', errorName(error));
  }
}

/** A certificate that will never issue is deleted, so the next attempt requests a fresh one. */
export async function dropCertificate(domainId: string, attempts: number, arn: string): Promise<void> {
  try {
    await acm().send(new DeleteCertificateCommand({ CertificateArn: arn }));
  } catch (error) {
    if (errorName(error) !== 'ResourceNotFoundException')
      logger.warn('ssl: certificate not deleted', { domain_id: domainId, error: errorName(error) });
  }
  await writeIfCurrent(domainId, attempts, { certificate_arn: null, ssl_validation_record: null });
}

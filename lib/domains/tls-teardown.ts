import { DeleteCertificateCommand } from '@aws-sdk/client-acm';
import {
  DeleteDistributionCommand,
  GetDistributionCommand,
  GetDistributionConfigCommand,
  UpdateDistributionCommand,
} from '@aws-sdk/client-cloudfront';
import { acm } from '../aws/acm.ts';
import { cloudfront } from '../aws/cloudfront.ts';
import { config } from '../config.ts';
import { getDomainItem } from './records.ts';
import { errorName } from './tls-failure.ts';
import { sendSslMessage } from './tls-queue.ts';
import { clearRemovedField } from './tls-records.ts';

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
    await sendSslMessage({ kind: 'ssl_teardown', domain_id: domainId }, config.sslCheckIntervalSeconds());
    return 'waiting' as const;
  };
  const distributionId = item.distribution_id;
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
  const certificateArn = item.certificate_arn;
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

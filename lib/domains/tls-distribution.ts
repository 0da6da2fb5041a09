import { CreateDistributionWithTagsCommand, GetDistributionCommand, ListDistributionsCommand } from '@aws-sdk/client-cloudfront';
import { cloudfront } from '../aws/cloudfront.ts';
import { CUSTOM_HOST_HEADER } from '../sites/hostname.ts';
import type { DomainRecord } from './domains.ts';
import { AttemptFailure, errorName } from './tls-failure.ts';

/** A verified domain's own CloudFront distribution (the spec's dedicated pull zone), made once per domain. */

/** The tag that names the domain a distribution was made for. */
export const DOMAIN_ID_TAG = 'slipway:domain-id';

/**
 * AWS's managed cache policy "CachingDisabled" and origin request policy
 * "AllViewerExceptHostHeader": a domain's distribution caches nothing itself
 * and passes the path, query and viewer headers on to the sites distribution,
 * which caches by site host and query (infra/site-serving.ts). Caching here
 * too would key a primary-domain 301, kept 30 days, on the path alone.
 */
const CACHING_DISABLED_POLICY_ID = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_POLICY_ID = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

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
const distributionTags = (record: Pick<DomainRecord, 'id' | 'project_id' | 'team_id'>) => [
  { Key: DOMAIN_ID_TAG, Value: record.id },
  { Key: 'slipway:project-id', Value: record.project_id },
  { Key: 'slipway:team-id', Value: record.team_id },
];

export async function createDistribution(record: DomainRecord, certificateArn: string): Promise<{ id: string; domainName: string }> {
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
              // Every method reaches the sites distribution, as a `_redirects` rule answers every method (docs/serving.md).
              AllowedMethods: {
                Quantity: 7,
                Items: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
                CachedMethods: { Quantity: 2, Items: ['GET', 'HEAD'] },
              },
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

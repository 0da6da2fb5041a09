import { randomUUID } from 'node:crypto';
import { CreateDistributionCommand, GetDistributionConfigCommand, type GeoRestriction } from '@aws-sdk/client-cloudfront';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../../lib/aws/clients.ts';
import { cloudfront } from '../../lib/aws/cloudfront.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';

/**
 * A CloudFront distribution in moto, shaped like a domain's own distribution
 * (the project's site as its origin, the hostname as its alias). Returns
 * CloudFront's id.
 */
export async function createTestDistribution(hostname: string, origin = `origin.${config.siteDomain()}`): Promise<string> {
  const reply = await cloudfront().send(
    new CreateDistributionCommand({
      DistributionConfig: {
        CallerReference: randomUUID(),
        Comment: `test distribution of ${hostname}`,
        Enabled: true,
        Aliases: { Quantity: 1, Items: [hostname] },
        Origins: {
          Quantity: 1,
          Items: [
            { Id: 'site', DomainName: origin, CustomOriginConfig: { HTTPPort: 80, HTTPSPort: 443, OriginProtocolPolicy: 'https-only' } },
          ],
        },
        DefaultCacheBehavior: {
          TargetOriginId: 'site',
          ViewerProtocolPolicy: 'redirect-to-https',
          CachePolicyId: '658327ea-f89d-4fab-a63d-7e88639e58f6',
        },
      },
    }),
  );
  return reply.Distribution!.Id!;
}

let nextPullZone = 900_000 + Math.floor(Math.random() * 90_000);

/**
 * Stands in for the TLS worker (issue 10 item 3, built separately), which
 * makes a verified domain's own distribution and records it on the domain:
 * writes `distribution_id` and `pull_zone_id` onto the domain item directly.
 */
export async function attachDistribution(domainId: string, distributionId: string): Promise<number> {
  const pullZoneId = nextPullZone++;
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.domain(domainId),
      UpdateExpression: 'SET distribution_id = :d, pull_zone_id = :p',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':d': distributionId, ':p': pullZoneId },
    }),
  );
  return pullZoneId;
}

/** The geo restriction the distribution holds, read back from CloudFront. */
export async function distributionGeoRestriction(distributionId: string): Promise<GeoRestriction> {
  const reply = await cloudfront().send(new GetDistributionConfigCommand({ Id: distributionId }));
  return reply.DistributionConfig!.Restrictions!.GeoRestriction!;
}

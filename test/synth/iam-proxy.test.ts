import { CloudFrontClient, ListDistributionsCommand } from '@aws-sdk/client-cloudfront';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startIamProxy, type IamProxy } from '../../local-cloud/iam/iam-proxy.ts';
import type { RolePolicies } from '../../local-cloud/iam/iam-policies.ts';

/** One role, its policy written here: what the proxy lets through to moto and what it answers itself. */
const role = (statements: object[]): RolePolicies => ({
  roleLogicalId: 'TestRole',
  roleName: 'Slipway-TestRole',
  roleArn: 'arn:aws:iam::123456789012:role/Slipway-TestRole',
  identityPolicies: [{ name: 'Grants', policy: { Version: '2012-10-17', Statement: statements } }],
  permissionBoundaryPolicies: [],
});

describe('the IAM proxy in front of the AWS endpoint', () => {
  let proxy: IamProxy;
  beforeAll(async () => {
    proxy = await startIamProxy({
      target: inject('awsEndpoint'),
      principals: new Map([
        [
          'LOCALROLETestRole',
          {
            functionName: 'Slipway-TestFunction',
            role: role([
              { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/allowed' },
              // As infra/grants.ts once wrote it: an action with no resource type scoped to ARNs, which AWS never matches.
              { Effect: 'Allow', Action: 'cloudfront:ListDistributions', Resource: 'arn:aws:cloudfront::123456789012:distribution/*' },
            ]),
          },
        ],
      ]),
      arns: { region: 'us-east-1', accountId: '123456789012', tableHashKey: () => 'pk', subnetVpc: () => undefined },
    });
  });
  afterAll(() => proxy?.stop());
  const credentials = { accessKeyId: 'LOCALROLETestRole', secretAccessKey: 'local' };

  it("a JSON-protocol call outside the role's grants gets DynamoDB's AccessDeniedException naming role, action and table; one inside reaches the endpoint", async () => {
    const dynamodb = new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials });
    const denied = await dynamodb.send(new GetItemCommand({ TableName: 'other', Key: { pk: { S: 'a' } } })).catch((error: Error) => error);
    expect(denied).toMatchObject({ name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } });
    expect((denied as Error).message).toBe(
      'User: arn:aws:sts::123456789012:assumed-role/Slipway-TestRole/Slipway-TestFunction is not authorized to perform: dynamodb:GetItem ' +
        'on resource: arn:aws:dynamodb:us-east-1:123456789012:table/other because no identity-based policy allows the dynamodb:GetItem action',
    );
    // Allowed, so moto answers: the table does not exist there.
    const passed = await dynamodb
      .send(new GetItemCommand({ TableName: 'allowed', Key: { pk: { S: 'a' } } }))
      .catch((error: Error) => error);
    expect(passed).toMatchObject({ name: 'ResourceNotFoundException' });
    dynamodb.destroy();
  });

  it('an action with no resource type is evaluated against "*": a grant naming distribution ARNs does not allow it (403 AccessDenied in XML)', async () => {
    const cloudfront = new CloudFrontClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials });
    const denied = await cloudfront.send(new ListDistributionsCommand({})).catch((error: Error) => error);
    expect(denied).toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    expect((denied as Error).message).toContain('is not authorized to perform: cloudfront:ListDistributions on resource: *');
    cloudfront.destroy();
    expect(proxy.usage()[0]!.denied.map((d) => d.action)).toEqual(['dynamodb:GetItem', 'cloudfront:ListDistributions']);
    expect(proxy.usage()[0]!.actionsUsed).toEqual(['dynamodb:GetItem']);
  });
});

import { describe, expect, it } from 'vitest';
import { selectRoute, type TemplateRoute } from '../../local-cloud/api-gateway/api-gateway.ts';
import { invokeRefusals } from '../../local-cloud/api-gateway/api-invoke.ts';
import { restProtocolChecks } from '../../local-cloud/iam/iam-requests-rest.ts';
import { jsonProtocolChecks, type ArnContext, type WireRequest } from '../../local-cloud/iam/iam-requests.ts';
import { resolveString, resolveValue, UnresolvableIntrinsicError, type LocalStackValues } from '../../local-cloud/template/intrinsics.ts';

const values: LocalStackValues = {
  accountId: '123456789012',
  region: 'us-east-1',
  stackName: 'Slipway',
  physical: new Map([
    ['Table', { ref: 'p-table', attributes: { Arn: 'arn:aws:dynamodb:us-east-1:123456789012:table/p-table' } }],
    ['Queue', { ref: 'http://127.0.0.1:1/123456789012/p-queue', attributes: { Arn: 'arn:aws:sqs:us-east-1:123456789012:p-queue' } }],
  ]),
};

describe('intrinsics of the template', () => {
  it('resolves Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select and Fn::Split, and pseudo parameters', () => {
    expect(resolveValue({ Ref: 'Queue' }, values)).toBe('http://127.0.0.1:1/123456789012/p-queue');
    expect(resolveValue({ 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Table', 'Arn'] }, '/index/gsi1']] }, values)).toBe(
      'arn:aws:dynamodb:us-east-1:123456789012:table/p-table/index/gsi1',
    );
    expect(resolveString({ 'Fn::Sub': 'arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${Table}-x' }, values)).toBe(
      'arn:aws:lambda:us-east-1:123456789012:function:p-table-x',
    );
    expect(resolveValue({ 'Fn::Select': [2, { 'Fn::Split': ['/', 'https://abc.lambda-url.on.aws/'] }] }, values)).toBe(
      'abc.lambda-url.on.aws',
    );
  });

  it('an intrinsic it cannot resolve is an error, never an empty string', () => {
    expect(() => resolveValue({ Ref: 'Missing' }, values)).toThrow(UnresolvableIntrinsicError);
    expect(() => resolveValue({ 'Fn::GetAtt': ['Table', 'StreamArn'] }, values)).toThrow('Fn::GetAtt Table.StreamArn: no local value');
    expect(() => resolveValue({ 'Fn::ImportValue': 'Shared-VpcId' }, values)).toThrow('Fn::ImportValue Shared-VpcId: no local value');
    expect(() => resolveValue({ 'Fn::If': ['Cond', 'a', 'b'] }, values)).toThrow(UnresolvableIntrinsicError);
  });
});

describe("API Gateway's route selection", () => {
  const route = (routeKey: string): TemplateRoute => {
    const [method, path] = routeKey === '$default' ? ['ANY', ''] : routeKey.split(' ');
    return {
      routeKey,
      method: method!,
      segments: path!.split('/').filter(Boolean),
      functionLogicalId: routeKey,
      credentialsRoleLogicalId: null,
      payloadFormatVersion: '2.0',
    };
  };
  const routes = [
    route('GET /api/v1/projects/{id}'),
    route('GET /api/v1/projects/current'),
    route('ANY /api/v1/files/{path+}'),
    route('GET /api/v1/files/{path+}'),
    route('$default'),
  ];
  it('prefers a literal segment over a parameter whatever the order, the method over ANY, and falls back to $default', () => {
    expect(selectRoute(routes, 'GET', '/api/v1/projects/current')!.route.routeKey).toBe('GET /api/v1/projects/current');
    expect(selectRoute(routes, 'GET', '/api/v1/projects/p%201')).toMatchObject({
      route: { routeKey: 'GET /api/v1/projects/{id}' },
      params: { id: 'p 1' },
    });
    expect(selectRoute(routes, 'GET', '/api/v1/files/a/b')).toMatchObject({
      route: { routeKey: 'GET /api/v1/files/{path+}' },
      params: { path: 'a/b' },
    });
    expect(selectRoute(routes, 'PUT', '/api/v1/files/a')!.route.routeKey).toBe('ANY /api/v1/files/{path+}');
    expect(selectRoute(routes, 'POST', '/api/v1/projects/x')!.route.routeKey).toBe('$default');
  });
});

describe('the IAM action and resource of a request', () => {
  const ctx: ArnContext = { region: 'us-east-1', accountId: '123456789012', tableHashKey: () => 'pk', subnetVpc: () => 'vpc-1' };
  const request = (service: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}): WireRequest => ({
    service,
    method,
    url: new URL(path, 'http://aws'),
    headers,
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  });
  it('maps each item of a DynamoDB transaction to its own action, with the partition key as dynamodb:LeadingKeys', () => {
    const checks = jsonProtocolChecks(
      request(
        'dynamodb',
        'POST',
        '/',
        {
          TransactItems: [
            { Put: { TableName: 't', Item: { pk: { S: 'TEAM#1' } } } },
            { ConditionCheck: { TableName: 't', Key: { pk: { S: 'X' } } } },
          ],
        },
        {
          'x-amz-target': 'DynamoDB_20120810.TransactWriteItems',
        },
      ),
      ctx,
    );
    expect(checks).toEqual([
      {
        action: 'dynamodb:PutItem',
        resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/t',
        context: { 'dynamodb:LeadingKeys': ['TEAM#1'] },
      },
      {
        action: 'dynamodb:ConditionCheckItem',
        resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/t',
        context: { 'dynamodb:LeadingKeys': ['X'] },
      },
    ]);
  });
  it("maps RunTask to ecs:RunTask in its cluster and iam:PassRole of the task definition's roles to ECS tasks", () => {
    const definition = 'arn:aws:ecs:us-east-1:123456789012:task-definition/Task:1';
    const roles = ['arn:aws:iam::123456789012:role/TaskRole', 'arn:aws:iam::123456789012:role/ExecutionRole'];
    const withRoles: ArnContext = { ...ctx, taskDefinitionRoles: (arn) => (arn === definition ? roles : []) };
    const body = { cluster: 'Cluster', taskDefinition: definition };
    const checks = jsonProtocolChecks(
      request('ecs', 'POST', '/', body, { 'x-amz-target': 'AmazonEC2ContainerServiceV20141113.RunTask' }),
      withRoles,
    );
    expect(checks).toEqual([
      { action: 'ecs:RunTask', resource: definition, context: { 'ecs:cluster': 'arn:aws:ecs:us-east-1:123456789012:cluster/Cluster' } },
      ...roles.map((role) => ({ action: 'iam:PassRole', resource: role, context: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } })),
    ]);
  });
  it('maps S3 batch deletes per key, copies to a read of the source, and a schedule to the role it passes', () => {
    expect(
      restProtocolChecks(
        request('s3', 'POST', '/b?delete', '<Delete><Object><Key>a/1</Key></Object><Object><Key>a&amp;2</Key></Object></Delete>'),
        ctx,
      ),
    ).toEqual([
      { action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/a/1' },
      { action: 's3:DeleteObject', resource: 'arn:aws:s3:::b/a&2' },
    ]);
    expect(restProtocolChecks({ ...request('s3', 'PUT', '/b/new', ''), headers: { 'x-amz-copy-source': '/b/old%20one' } }, ctx)).toEqual([
      { action: 's3:PutObject', resource: 'arn:aws:s3:::b/new' },
      { action: 's3:GetObject', resource: 'arn:aws:s3:::b/old one' },
    ]);
    expect(
      restProtocolChecks(
        request('scheduler', 'POST', '/schedules/s1', { GroupName: 'g', Target: { RoleArn: 'arn:aws:iam::123456789012:role/r' } }),
        ctx,
      ),
    ).toEqual([
      { action: 'scheduler:CreateSchedule', resource: 'arn:aws:scheduler:us-east-1:123456789012:schedule/g/s1' },
      {
        action: 'iam:PassRole',
        resource: 'arn:aws:iam::123456789012:role/r',
        context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
      },
    ]);
  });
});

describe("API Gateway's right to invoke a route's Lambda", () => {
  const arn = (id: string) => `arn:aws:lambda:us-east-1:123456789012:function:Slipway-${id}`;
  const trust = (service: string) => ({
    Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { Service: service } }],
  });
  const template = {
    assemblyDir: '',
    stackName: 'Slipway',
    resources: {
      InvokeRole: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: trust('apigateway.amazonaws.com') } },
      LambdaTrusting: { Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: trust('lambda.amazonaws.com') } },
      Permitted: {
        Type: 'AWS::Lambda::Permission',
        Properties: {
          FunctionName: { 'Fn::GetAtt': ['Open', 'Arn'] },
          Action: 'lambda:InvokeFunction',
          Principal: 'apigateway.amazonaws.com',
        },
      },
    },
  };
  const role = (roleLogicalId: string, resources: string[]) => ({
    roleLogicalId,
    roleName: `Slipway-${roleLogicalId}`,
    roleArn: `arn:aws:iam::123456789012:role/Slipway-${roleLogicalId}`,
    identityPolicies: [
      {
        name: 'p',
        policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: resources }] },
      },
    ],
    permissionBoundaryPolicies: [],
  });
  const roles = { InvokeRole: role('InvokeRole', [arn('Granted')]), LambdaTrusting: role('LambdaTrusting', [arn('Trusting')]) };

  it('refuses a route whose role lacks the function ARN or does not trust API Gateway, or that has no role and no permission', async () => {
    const refusals = await invokeRefusals(
      template,
      [
        { routeKey: 'GET /granted', functionLogicalId: 'Granted', credentialsRoleLogicalId: 'InvokeRole' },
        { routeKey: 'GET /other', functionLogicalId: 'Other', credentialsRoleLogicalId: 'InvokeRole' },
        { routeKey: 'GET /trusting', functionLogicalId: 'Trusting', credentialsRoleLogicalId: 'LambdaTrusting' },
        { routeKey: 'GET /open', functionLogicalId: 'Open', credentialsRoleLogicalId: null },
        { routeKey: 'GET /closed', functionLogicalId: 'Closed', credentialsRoleLogicalId: null },
      ],
      roles,
      { accountId: '123456789012', functionArn: arn },
    );
    expect(Object.fromEntries(refusals)).toEqual({
      'GET /other': `InvokeRole is not allowed lambda:InvokeFunction on ${arn('Other')}`,
      'GET /trusting': 'the trust policy of LambdaTrusting does not let API Gateway assume it',
      'GET /closed': 'no permission lets API Gateway invoke the function',
    });
  });
});

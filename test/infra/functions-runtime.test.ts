import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CfnElement, Stack } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HandlerFunction } from '../../infra/functions.ts';
import { blockedEgressRanges } from '../../infra/functions-network.ts';
import type { FunctionsRuntime } from '../../infra/functions-runtime.ts';
import type { SlipwayState } from '../../infra/state.ts';
import { cloudHostVariables } from '../../lib/functions/hosts/cloud/variables.ts';
import { finalizeRow, type Resource, sharedFunctionsStack } from '../support/functions-stack.ts';
import { statementsOfRole } from '../support/iam-policies.ts';
import { viewerFunction } from '../support/viewer-function.ts';

/** The functions runtime in a stack of its own, synthesized with cdk-nag as the app does (test/support/functions-stack.ts). */
let synthesized: ReturnType<typeof sharedFunctionsStack>;
let template: Template;
let stack: Stack;
let runtime: FunctionsRuntime;
let finalize: HandlerFunction;
let prepareWorker: HandlerFunction;
let state: SlipwayState;
let outdir: string;
let resources: Record<string, Resource>;
let idOf: ReturnType<typeof sharedFunctionsStack>['idOf'];

beforeAll(() => {
  synthesized = sharedFunctionsStack();
  ({ template, stack, runtime, finalize, prepareWorker, state, outdir, resources, idOf } = synthesized);
}, 300_000);

const statementsOf = (roleId: string) => statementsOfRole(resources, roleId);

describe('the runner image and the queued-invocation task', () => {
  it('stages the runner Dockerfile as an image asset (no Docker at synth)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(outdir, 'FunctionsTest.assets.json'), 'utf8'));
    const images = Object.values(manifest.dockerImages ?? {}) as { source: { directory: string; dockerFile?: string } }[];
    // The runner's and the container door's (test/infra/functions-door.test.ts).
    expect(images).toHaveLength(2);
    const runner = images.find((image) => fs.existsSync(path.join(outdir, image.source.directory, 'runner.mjs')))!;
    const staged = path.join(outdir, runner.source.directory);
    const dockerfile = fs.readFileSync(path.join(staged, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:22\.\d+\.\d+-bookworm-slim$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toContain('COPY runner.mjs task.mjs /runner/');
    expect(dockerfile).toContain('ENTRYPOINT ["node", "/runner/task.mjs"]');
    expect(fs.existsSync(path.join(staged, 'runner.mjs'))).toBe(true);
  });

  it('is a Fargate task of 512 MiB and the smallest CPU, read-only root, not root, no environment, with a task role that holds nothing', () => {
    const task = resources[idOf(runtime.taskDefinition)]!;
    expect(task.Properties).toMatchObject({
      RequiresCompatibilities: ['FARGATE'],
      Cpu: '256',
      Memory: '512',
      ContainerDefinitions: [
        expect.objectContaining({
          ReadonlyRootFilesystem: true,
          User: '1000:1000',
          MountPoints: [{ ContainerPath: '/tmp', SourceVolume: 'scratch', ReadOnly: false }],
        }),
      ],
    });
    expect(task.Properties.ContainerDefinitions[0].Environment).toBeUndefined();
    const taskRoleId = task.Properties.TaskRoleArn['Fn::GetAtt'][0];
    expect(statementsOf(taskRoleId)).toEqual([]);
    expect(resources[taskRoleId]!.Properties.PermissionsBoundary).toEqual({ Ref: idOf(runtime.userFunctionBoundary) });
  });

  it('lets the worker run only that task definition in that cluster and pass only its roles to ECS', () => {
    const statements = statementsOf(stack.getLogicalId(stack.node.findChild('InvocationsWorkerRole').node.defaultChild as CfnElement));
    expect(statements).toEqual([
      expect.objectContaining({
        Action: 'ecs:RunTask',
        Resource: { Ref: idOf(runtime.taskDefinition) },
        Condition: { ArnEquals: { 'ecs:cluster': { 'Fn::GetAtt': [idOf(runtime.cluster), 'Arn'] } } },
      }),
      expect.objectContaining({
        Action: 'iam:PassRole',
        Condition: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
      }),
    ]);
    expect((statements[1]!.Resource as unknown[]).length).toBe(2);
  });
});

describe('the HTTPS door', () => {
  it('CloudFront answers *.{function_domain}, redirects HTTP to HTTPS, passes every method, caches nothing', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['*.fn.example.site'],
        ViewerCertificate: Match.objectLike({ AcmCertificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/0001' }),
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'redirect-to-https',
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
          CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          FunctionAssociations: [Match.objectLike({ EventType: 'viewer-request' })],
        }),
      }),
    });
  });

  it('the origin is the router function URL, streaming; the router knows where to make user functions', () => {
    template.hasResourceProperties('AWS::Lambda::Url', {
      TargetFunctionArn: { 'Fn::GetAtt': [idOf(runtime.router.fn), 'Arn'] },
      InvokeMode: 'RESPONSE_STREAM',
    });
    const variables = resources[idOf(runtime.router.fn)]!.Properties.Environment.Variables;
    const routerVariables = ['namePrefix', 'roleArn', 'runnerLayerArn', 'subnetIds', 'securityGroupId'] as const;
    for (const key of routerVariables) expect(variables[cloudHostVariables[key]], key).toBeDefined();
    // Starting tasks is the invocations worker's (test/infra/functions-queued-cloud.test.ts).
    expect(variables[cloudHostVariables.taskCluster]).toBeUndefined();
    expect(variables[cloudHostVariables.namePrefix]).toBe('FunctionsTest-fn-');
  });

  it('the router makes and invokes only prefixed functions, in the compute VPC and group, passing only the user-function role', () => {
    const statements = statementsOf(idOf(runtime.router.role));
    const create = statements.find((s) => [s.Action].flat().includes('lambda:CreateFunction'))!;
    expect(JSON.stringify(create.Resource)).toContain(':function:FunctionsTest-fn-*');
    expect(create.Condition).toMatchObject({
      StringEquals: { 'lambda:VpcIds': { Ref: idOf(runtime.vpc) } },
      'ForAllValues:StringEquals': { 'lambda:SecurityGroupIds': [{ 'Fn::GetAtt': [idOf(runtime.computeSecurityGroup), 'GroupId'] }] },
    });
    // Tagging at creation is authorized as TagResource, whose request carries no VPC or layer keys: a statement of its own.
    expect([create.Action].flat()).not.toContain('lambda:TagResource');
    const tag = statements.find((s) => [s.Action].flat().includes('lambda:TagResource'))!;
    expect(JSON.stringify(tag.Resource)).toContain(':function:FunctionsTest-fn-*');
    expect(tag.Condition).toEqual({ 'ForAllValues:StringLike': { 'aws:TagKeys': ['slipway:*'] } });
    const passRole = statements.find((s) => [s.Action].flat().includes('iam:PassRole'))!;
    expect(passRole.Resource).toEqual({ 'Fn::GetAtt': [idOf(runtime.userFunctionRole), 'Arn'] });
    for (const s of statements) for (const action of [s.Action].flat()) expect(action).not.toMatch(/\*/);
  });

  it('the router may write and delete staged request bodies under door-bodies/ only, which the bucket expires after a day', () => {
    const statements = statementsOf(idOf(runtime.router.role));
    const bundlesArn = { 'Fn::GetAtt': [idOf(state.buckets.bundles), 'Arn'] };
    const writers = statements.filter((s) => [s.Action].flat().some((action) => /^s3:(Put|Delete)Object/.test(action as string)));
    expect(writers).toEqual([
      expect.objectContaining({
        Action: ['s3:PutObject', 's3:DeleteObject'],
        Resource: { 'Fn::Join': ['', [bundlesArn, '/door-bodies/*']] },
      }),
    ]);
    const rules = resources[idOf(state.buckets.bundles)]!.Properties.LifecycleConfiguration.Rules as Record<string, unknown>[];
    expect(rules).toContainEqual(
      expect.objectContaining({
        Prefix: 'door-bodies/',
        ExpirationInDays: 1,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        Status: 'Enabled',
      }),
    );
  });

  it("the viewer function answers a declared body over 10 MiB with the door's 413 envelope, and passes 10 MiB on to the door", () => {
    const [, viewer] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::CloudFront::Function')!;
    const distribution = resources[idOf(runtime.distribution)]!.Properties.DistributionConfig;
    const select = viewerFunction(
      String(viewer.Properties.FunctionCode),
      distribution.Origins.map((o: { Id: string }) => o.Id),
    );
    const run = (request: object, ip: string) => select(request, ip).result;
    const request = (length: string | null, traceparent?: string) => ({
      method: 'POST',
      uri: '/',
      querystring: {},
      cookies: {},
      headers: {
        host: { value: 'echo-sub.fn.example.site' },
        ...(length === null ? {} : { 'content-length': { value: length } }),
        ...(traceparent ? { traceparent: { value: traceparent } } : {}),
      },
    });
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const over = run(request('10485761', `00-${trace}-b7ad6b7169203331-01`), '198.51.100.7');
    expect(over.statusCode).toBe(413);
    expect(over.headers).toEqual({
      'content-type': { value: 'application/json; charset=utf-8' },
      'x-scaler-http-cold-start': { value: 'false' },
    });
    const body = JSON.parse((over.body as { data: string }).data);
    expect(body).toEqual({
      code: 'FUNCTION_BODY_TOO_LARGE',
      details: null,
      error: 'The request body is over 10 MiB, the limit of a function request.',
      meta: {
        request_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        timestamp: expect.any(String),
        trace_id: trace,
      },
    });
    expect(new Date(body.meta.timestamp).toISOString()).toBe(body.meta.timestamp);
    // An invalid traceparent gets a fresh trace id, as the door gives one.
    const fresh = run(request('99999999', `ff-${trace}-b7ad6b7169203331-01`), '198.51.100.7');
    expect(JSON.parse((fresh.body as { data: string }).data).meta.trace_id).toMatch(/^(?!0af7651916cd43dd8448eb211c80319c)[0-9a-f]{32}$/);
    // A body of 10 MiB, or one not declared, is passed on to the container door, an origin of this distribution.
    for (const length of ['10485760', null]) {
      const passed = select(request(length), '198.51.100.7');
      expect('statusCode' in passed.result, String(length)).toBe(false);
      expect(passed.result.headers['x-slipway-host']).toEqual({ value: 'echo-sub.fn.example.site' });
      expect(passed.selected).toEqual(['door-large-bodies']);
    }
  });

  it('the function-lambdas worker makes user functions with exactly the router’s grants and variables, and invokes none', () => {
    const making = (roleId: string) =>
      statementsOf(roleId)
        .filter((s) => [s.Action].flat().some((action) => /^(lambda|iam|ec2):/.test(action)))
        .map((s) => ({ ...s, Action: [s.Action].flat().filter((action) => action !== 'lambda:InvokeFunction') }))
        .filter((s) => s.Action.length > 0);
    const worker = making(idOf(prepareWorker.role));
    expect(worker.flatMap((s) => s.Action)).toEqual(
      expect.arrayContaining(['lambda:GetFunction', 'lambda:CreateFunction', 'lambda:TagResource', 'iam:PassRole']),
    );
    expect(worker).toEqual(making(idOf(runtime.router.role)));
    const actions = statementsOf(idOf(prepareWorker.role)).flatMap((s) => [s.Action].flat());
    expect(actions).not.toContain('lambda:InvokeFunction');
    const variables = resources[idOf(prepareWorker.fn)]!.Properties.Environment.Variables;
    const routerVariables = resources[idOf(runtime.router.fn)]!.Properties.Environment.Variables;
    for (const key of ['namePrefix', 'roleArn', 'runnerLayerArn', 'subnetIds', 'securityGroupId'] as const)
      expect(variables[cloudHostVariables[key]], key).toEqual(routerVariables[cloudHostVariables[key]]);
  });

  it('user-function roles can touch nothing of the platform: network interfaces only, no logs, a boundary that denies platform resources', () => {
    const role = resources[idOf(runtime.userFunctionRole)]!;
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.PermissionsBoundary).toEqual({ Ref: idOf(runtime.userFunctionBoundary) });
    const actions = statementsOf(idOf(runtime.userFunctionRole)).flatMap((s) => [s.Action].flat());
    expect(actions.length).toBeGreaterThan(0);
    for (const action of actions)
      expect(action).toMatch(
        /^ec2:(CreateNetworkInterface|DescribeNetworkInterfaces|DescribeSubnets|DeleteNetworkInterface|AssignPrivateIpAddresses|UnassignPrivateIpAddresses)$/,
      );
    const boundary = resources[idOf(runtime.userFunctionBoundary)]!.Properties.PolicyDocument.Statement as {
      Effect: string;
      Action?: unknown;
      NotAction?: unknown;
      Resource: unknown;
    }[];
    const allowed = boundary.filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action].flat());
    for (const action of allowed) expect(action).toMatch(/^ec2:/);
    const denied = JSON.stringify(boundary.find((s) => s.Effect === 'Deny')!.Resource);
    for (const construct of [
      state.table,
      state.buckets.sites,
      state.buckets.bundles,
      state.queues.invocations,
      state.secrets.envEncryption,
      state.secrets.gitState,
    ]) {
      expect(denied).toContain(idOf(construct));
    }
  });
});

describe('the network of user code', () => {
  it('the security group allows TCP 443 out and nothing else, and nothing in', () => {
    const group = resources[idOf(runtime.computeSecurityGroup)]!;
    expect(group.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
    ]);
    expect(group.Properties.SecurityGroupIngress).toBeUndefined();
    // No rule of another group's names this one (the container door's groups have rules of their own).
    const groupId = JSON.stringify({ 'Fn::GetAtt': [idOf(runtime.computeSecurityGroup), 'GroupId'] });
    expect(
      Object.values(resources).filter(
        (r) =>
          (r.Type === 'AWS::EC2::SecurityGroupIngress' || r.Type === 'AWS::EC2::SecurityGroupEgress') &&
          JSON.stringify(r).includes(groupId),
      ),
    ).toEqual([]);
  });

  it('the network ACL of the compute subnets denies private, shared and link-local ranges before it allows 443', () => {
    const entries = Object.values(resources)
      .filter((r) => r.Type === 'AWS::EC2::NetworkAclEntry')
      .map((r) => r.Properties);
    const egress = entries.filter((e) => e.Egress === true).sort((a, b) => a.RuleNumber - b.RuleNumber);
    const allow443 = egress.find((e) => e.RuleAction === 'allow')!;
    expect(allow443).toMatchObject({ CidrBlock: '0.0.0.0/0', Protocol: 6, PortRange: { From: 443, To: 443 } });
    expect(egress.filter((e) => e.RuleAction === 'allow')).toHaveLength(1);
    for (const cidr of blockedEgressRanges) {
      const deny = egress.find((e) => e.CidrBlock === cidr && e.RuleAction === 'deny');
      expect(deny, cidr).toMatchObject({ Protocol: -1 });
      expect(deny!.RuleNumber).toBeLessThan(allow443.RuleNumber);
    }
    expect(blockedEgressRanges).toEqual(
      expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16']),
    );
    // Attached to both private compute subnets, which route out through NAT.
    const associations = Object.values(resources).filter((r) => r.Type === 'AWS::EC2::SubnetNetworkAclAssociation');
    expect(associations).toHaveLength(2);
  });

  it('the private subnets route out through one NAT instance (natGateways 0) that forwards HTTPS from the VPC only', () => {
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::EC2::NatGateway')).toEqual([]);
    const nat = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::EC2::Instance' && r.Properties.InstanceType === 't4g.nano');
    expect(nat).toHaveLength(1);
    const [[natId, { Properties: instance }]] = nat as unknown as [[string, { Properties: Record<string, any> }]];
    expect(instance).toMatchObject({
      SourceDestCheck: false,
      BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { Encrypted: true, VolumeSize: 8, VolumeType: 'gp3' } }],
      NetworkInterfaces: [{ AssociatePublicIpAddress: true }],
    });
    // Every private subnet (Compute and Door, two AZs) has its default route through it.
    const viaNat = Object.values(resources).filter((r) => r.Type === 'AWS::EC2::Route' && r.Properties.InstanceId);
    expect(viaNat.map((r) => [r.Properties.DestinationCidrBlock, r.Properties.InstanceId])).toEqual(
      Array.from({ length: 4 }, () => ['0.0.0.0/0', { Ref: natId }]),
    );
    const group = resources[instance.NetworkInterfaces[0].GroupSet[0]['Fn::GetAtt'][0]]!.Properties;
    expect(group.SecurityGroupIngress).toEqual([
      expect.objectContaining({ CidrIp: '10.40.0.0/16', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
    ]);
    expect(group.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
    ]);
  });
});

describe('the finalize Lambda runs esbuild', () => {
  it('runs on x86_64 with esbuild external in its bundle and the package and its linux-x64 binary in its asset', () => {
    const fn = resources[idOf(finalize.fn)]!;
    expect(fn.Properties).toMatchObject({ Architectures: ['x86_64'], MemorySize: 1024 });
    const assetHash = fn.Properties.Code.S3Key.replace(/\.zip$/, '');
    const asset = path.join(outdir, `asset.${assetHash}`);
    const code = fs.readFileSync(path.join(asset, 'index.mjs'), 'utf8');
    expect(code).not.toMatch(/esbuild\/lib\/main\.js|ESBUILD_BINARY_PATH/);
    expect(JSON.parse(fs.readFileSync(path.join(asset, 'node_modules/esbuild/package.json'), 'utf8')).name).toBe('esbuild');
    const binary = path.join(asset, 'node_modules/@esbuild/linux-x64/bin/esbuild');
    expect(fs.statSync(binary).mode & 0o111).not.toBe(0);
  });

  it('the row may write the bundles bucket (the build stores bundles there)', () => {
    expect(finalizeRow.uses).toContain('bundles:write');
    expect(finalizeRow.runtimePackages).toEqual({ names: ['esbuild', '@esbuild/linux-x64'], architecture: 'x86_64' });
  });
});

describe('compliance', () => {
  it('has no unacknowledged cdk-nag finding', () => {
    const report = new AwsSolutionsChecks().validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});

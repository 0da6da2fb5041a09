import * as path from 'node:path';
import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { DockerImageAsset, Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { RUNNER_CONTAINER_NAME } from '../lib/functions/hosts/cloud/queued-task.ts';
import { cloudHostVariables } from '../lib/functions/hosts/cloud/variables.ts';
import { FUNCTION_MEMORY_MB } from '../lib/functions/model.ts';
import { SITE_HOST_HEADER } from '../lib/sites/serve.ts';
import { lambdaRuntime, repoRoot } from './bundling.ts';
import { HandlerFunction } from './functions.ts';
import type { GrantContext } from './grants.ts';

/** The runner program and its Dockerfile (the runner itself is lib/functions/runner/runner.mjs). */
export const runnerDirectory = path.join(repoRoot, 'lib/functions/runner');

/**
 * Address ranges user code must never reach (spec, Limits: "port 80, private
 * ranges and the cloud metadata address are blocked"): RFC 1918, carrier-grade
 * NAT, link-local (the metadata addresses). The VPC is IPv4-only, so there is
 * no IPv6 route to deny.
 */
export const blockedEgressRanges = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16'] as const;

export interface FunctionsRuntimeProps {
  grants: GrantContext;
  /** The environment every platform function gets (table and bucket names, FUNCTION_DOMAIN ...). */
  environment: Record<string, string>;
  /** Functions answer at {name}-{subdomain}.{functionDomain}. */
  functionDomain: string;
  /**
   * ACM certificate (us-east-1) for `*.{functionDomain}`; context `functionCertificateArn`.
   * Without it the distribution answers on its cloudfront.net name only.
   */
  certificateArn?: string;
}

/**
 * Where user functions run in the cloud (docs/functions.md):
 *
 * - the network of user code: a VPC whose private subnets reach the internet
 *   through NAT, a security group allowing TCP 443 out and nothing else, and a
 *   network ACL that denies the private, shared and link-local ranges first;
 * - the HTTPS door: CloudFront for `*.{function_domain}` in front of the
 *   router Lambda, which runs the door with the cloud host; the host makes one
 *   Lambda per built function from the runner layer, in that VPC, under the
 *   user-function role;
 * - queued invocations: the runner's container image and a Fargate task
 *   definition, started per invocation by the invocations worker
 *   (`connectInvocationsWorker`: its environment and grants).
 */
export class FunctionsRuntime extends Construct {
  readonly vpc: ec2.Vpc;
  readonly computeSecurityGroup: ec2.SecurityGroup;
  readonly computeNetworkAcl: ec2.NetworkAcl;
  readonly runnerImage: DockerImageAsset;
  readonly runnerLayer: lambda.LayerVersion;
  readonly cluster: ecs.Cluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly userFunctionRole: iam.Role;
  readonly userFunctionBoundary: iam.ManagedPolicy;
  readonly router: HandlerFunction;
  readonly routerUrl: lambda.FunctionUrl;
  readonly distribution: cloudfront.Distribution;
  /** Every user-function Lambda's name starts with it. */
  readonly functionNamePrefix: string;
  /** Every resource of the platform: what user code (functions, builds) is denied. */
  readonly platformResources: string[];

  constructor(scope: Construct, id: string, props: FunctionsRuntimeProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { state } = props.grants;
    this.functionNamePrefix = `${stack.stackName.slice(0, 20)}-fn-`;

    // --- The network of user code -------------------------------------------------------------
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr('10.40.0.0/16'),
      maxAzs: 2,
      // One NAT gateway: user functions are a closed beta; an AZ outage costs egress, not the door.
      natGateways: 1,
      subnetConfiguration: [
        { name: 'Public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'Compute', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
      // Restricting the default group takes a custom-resource Lambda; nothing is ever placed in it
      // (every Lambda and task names the compute group), so it stays as EC2 makes it.
      restrictDefaultSecurityGroup: false,
    });
    const flowLogs = new logs.LogGroup(this, 'VpcFlowLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.vpc.addFlowLog('FlowLog', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs),
      trafficType: ec2.FlowLogTrafficType.REJECT,
    });

    this.computeSecurityGroup = new ec2.SecurityGroup(this, 'ComputeSecurityGroup', {
      vpc: this.vpc,
      description: 'Slipway user functions: HTTPS out only, nothing in',
      allowAllOutbound: false,
    });
    this.computeSecurityGroup.addEgressRule(
      ec2.Peer.anyIpv4(),
      ec2.Port.tcp(443),
      'HTTPS to the internet (the network ACL removes private ranges)',
    );

    // Stateless, so both directions are listed: denies first (lower numbers win), then HTTPS out and its replies in.
    this.computeNetworkAcl = new ec2.NetworkAcl(this, 'ComputeNetworkAcl', {
      vpc: this.vpc,
      subnetSelection: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    });
    blockedEgressRanges.forEach((cidr, index) => {
      for (const direction of [ec2.TrafficDirection.EGRESS, ec2.TrafficDirection.INGRESS]) {
        this.computeNetworkAcl.addEntry(`Deny${direction === ec2.TrafficDirection.EGRESS ? 'Out' : 'In'}${index}`, {
          ruleNumber: 100 + index * 10,
          cidr: ec2.AclCidr.ipv4(cidr),
          traffic: ec2.AclTraffic.allTraffic(),
          direction,
          ruleAction: ec2.Action.DENY,
        });
      }
    });
    this.computeNetworkAcl.addEntry('AllowHttpsOut', {
      ruleNumber: 200,
      cidr: ec2.AclCidr.anyIpv4(),
      traffic: ec2.AclTraffic.tcpPort(443),
      direction: ec2.TrafficDirection.EGRESS,
      ruleAction: ec2.Action.ALLOW,
    });
    Validations.of(this.computeNetworkAcl).acknowledge({
      id: 'AwsSolutions-VPC3',
      reason:
        'The spec blocks private ranges and the metadata address for user code; a security group can only allow, so the network ACL of the compute ' +
        'subnets is what denies those ranges before the HTTPS allow rule.',
    });
    this.computeNetworkAcl.addEntry('AllowRepliesIn', {
      ruleNumber: 200,
      cidr: ec2.AclCidr.anyIpv4(),
      traffic: ec2.AclTraffic.tcpPortRange(1024, 65535),
      direction: ec2.TrafficDirection.INGRESS,
      ruleAction: ec2.Action.ALLOW,
    });

    // --- What user code may do in AWS: nothing of the platform ---------------------------------
    const platformResources = (this.platformResources = [
      state.table.tableArn,
      `${state.table.tableArn}/index/*`,
      ...Object.values(state.buckets).flatMap((bucket) => [bucket.bucketArn, bucket.arnForObjects('*')]),
      state.accessLogsBucket.bucketArn,
      state.accessLogsBucket.arnForObjects('*'),
      ...Object.values(state.queues).map((queue) => queue.queueArn),
      ...Object.values(state.deadLetterQueues).map((queue) => queue.queueArn),
      ...Object.values(state.secrets).map((secret) => secret.secretArn),
      state.schedulerRole.roleArn,
    ]);
    // Only Lambda's network-interface work is ever allowed; the platform's resources are denied even
    // if a grant were added to a role by mistake.
    const eniActions = [
      'ec2:CreateNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:DeleteNetworkInterface',
      'ec2:AssignPrivateIpAddresses',
      'ec2:UnassignPrivateIpAddresses',
    ];
    this.userFunctionBoundary = new iam.ManagedPolicy(this, 'UserCodeBoundary', {
      description: 'Permissions boundary of every role user code runs under: VPC network interfaces only, never a platform resource',
      statements: [
        new iam.PolicyStatement({ sid: 'LambdaNetworkInterfaces', actions: eniActions, resources: ['*'] }),
        new iam.PolicyStatement({
          sid: 'NoPlatformResources',
          effect: iam.Effect.DENY,
          notActions: ['ec2:*'],
          resources: platformResources,
        }),
      ],
    });
    Validations.of(this.userFunctionBoundary).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'A permissions boundary only caps what a role may be granted: it allows the network-interface actions Lambda needs for VPC functions ' +
        '(EC2 cannot scope Describe calls to resources) and denies every platform resource.',
    });

    this.userFunctionRole = new iam.Role(this, 'UserFunctionRole', {
      description: 'Runs user functions (one Lambda per built function): VPC network interfaces only',
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
      permissionsBoundary: this.userFunctionBoundary,
    });
    // What AWSLambdaVPCAccessExecutionRole holds, written out so no AWS managed policy is attached.
    // No log permission at all: the spec says HTTPS calls are not recorded.
    this.userFunctionRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: eniActions, resources: ['*'] }));
    Validations.of(this.userFunctionRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Lambda creates and removes the network interfaces of VPC functions with the execution role; EC2 names the interfaces at creation, ' +
        'so these actions cannot be scoped to resources (the AWSLambdaVPCAccessExecutionRole managed policy uses * for the same reason).',
    });

    // --- The runner: a container image for queued calls, a layer for the door ------------------
    this.runnerImage = new DockerImageAsset(this, 'RunnerImage', {
      directory: runnerDirectory,
      file: 'Dockerfile',
      platform: Platform.LINUX_AMD64,
      exclude: ['*.md', '*.test.*'],
    });
    // The same runner program, as the layer every user-function Lambda loads at /opt/runner.mjs.
    this.runnerLayer = new lambda.LayerVersion(this, 'RunnerLayer', {
      description: 'Slipway function runner (lib/functions/runner/runner.mjs), loaded by every user-function Lambda',
      code: lambda.Code.fromAsset(runnerDirectory, { exclude: ['Dockerfile', 'task.mjs', '*.md', '*.test.*'] }),
      compatibleRuntimes: [lambdaRuntime],
      compatibleArchitectures: [lambda.Architecture.ARM_64, lambda.Architecture.X86_64],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.cluster = new ecs.Cluster(this, 'InvocationsCluster', {
      vpc: this.vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    const taskRole = new iam.Role(this, 'InvocationTaskRole', {
      description: 'Task role of queued function invocations: holds no permission',
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
      permissionsBoundary: this.userFunctionBoundary,
    });
    this.taskDefinition = new ecs.FargateTaskDefinition(this, 'InvocationTask', {
      // The smallest Fargate CPU with the spec's 512 MB.
      cpu: 256,
      memoryLimitMiB: FUNCTION_MEMORY_MB,
      runtimePlatform: { operatingSystemFamily: ecs.OperatingSystemFamily.LINUX, cpuArchitecture: ecs.CpuArchitecture.X86_64 },
      taskRole,
    });
    this.taskDefinition.addVolume({ name: 'scratch' });
    const invocationLogs = new logs.LogGroup(this, 'InvocationLogs', {
      // Queued-call console output is kept 7 days (spec, Data handling of functions).
      retention: logs.RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const container = this.taskDefinition.addContainer(RUNNER_CONTAINER_NAME, {
      image: ecs.ContainerImage.fromDockerImageAsset(this.runnerImage),
      essential: true,
      readonlyRootFilesystem: true,
      // The image's `node` user; never root.
      user: '1000:1000',
      logging: ecs.LogDrivers.awsLogs({ logGroup: invocationLogs, streamPrefix: 'invocation' }),
    });
    container.addMountPoints({ containerPath: '/tmp', sourceVolume: 'scratch', readOnly: false });
    Validations.of(this.taskDefinition).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'The execution role pulls the runner image: ecr:GetAuthorizationToken has no resource-level permissions; the pull itself is limited to the asset repository.',
    });

    // --- The HTTPS door: CloudFront, the router, one Lambda per function -----------------------
    this.router = new HandlerFunction(this, 'Router', {
      handler: 'handlers/edge/functions-router.ts',
      description: 'Slipway: the functions HTTPS door for {name}-{subdomain}.{function_domain}',
      // Resolves hosts and counts telemetry (table); reads a bundle to make its function's Lambda.
      uses: ['table:read', 'table:write', 'bundles:read'],
      // The 60 s budget, plus making a new function's Lambda on its first request.
      timeoutSeconds: 180,
      memoryMb: 1024,
      environment: {
        ...props.environment,
        [cloudHostVariables.namePrefix]: this.functionNamePrefix,
        [cloudHostVariables.roleArn]: this.userFunctionRole.roleArn,
        [cloudHostVariables.runnerLayerArn]: this.runnerLayer.layerVersionArn,
        [cloudHostVariables.subnetIds]: this.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds.join(','),
        [cloudHostVariables.securityGroupId]: this.computeSecurityGroup.securityGroupId,
      },
      grants: props.grants,
    });
    const userFunctions = stack.formatArn({
      service: 'lambda',
      resource: 'function',
      resourceName: `${this.functionNamePrefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const routerRole = this.router.role;
    routerRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:GetFunction', 'lambda:InvokeFunction'], resources: [userFunctions] }),
    );
    // A function the router makes is in the compute VPC, behind the compute group, with the runner layer.
    routerRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['lambda:CreateFunction', 'lambda:TagResource'],
        resources: [userFunctions],
        conditions: {
          StringEquals: { 'lambda:VpcIds': this.vpc.vpcId },
          'ForAllValues:StringEquals': {
            'lambda:SecurityGroupIds': [this.computeSecurityGroup.securityGroupId],
            'lambda:Layer': [this.runnerLayer.layerVersionArn],
          },
        },
      }),
    );
    routerRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['lambda:GetLayerVersion'], resources: [this.runnerLayer.layerVersionArn] }),
    );
    // Lambda checks the VPC configuration of a new function with the caller's EC2 read rights.
    routerRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'], resources: ['*'] }),
    );
    this.userFunctionRole.grantPassRole(routerRole);
    Validations.of(routerRole).acknowledge({
      // cdk-nag names the finding by the ARN as rendered: pseudo parameters unless the stack has a fixed environment.
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:${Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region}:${Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account}:function:${this.functionNamePrefix}*]`,
      reason:
        "The router makes and invokes one Lambda per built function, named at run time under the stack's prefix, so the grant covers that prefix only; " +
        'creation is further bound to the compute VPC, security group and runner layer.',
    });
    Validations.of(routerRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "Lambda checks the VPC of a function being created with the caller's ec2:DescribeSecurityGroups, DescribeSubnets and DescribeVpcs, " +
        'which EC2 cannot scope to resources; they read network configuration only.',
    });

    // Public by the spec (anyone may call a function). Origin access control would make every POST
    // caller sign its body (x-amz-content-sha256), which an arbitrary HTTP client does not do.
    this.routerUrl = this.router.fn.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });

    const copyHost = new cloudfront.Function(this, 'CopyFunctionHost', {
      comment: `Copies the viewer Host into ${SITE_HOST_HEADER} for the functions router`,
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(
        `function handler(event) {\n` +
          `  var request = event.request;\n` +
          `  request.headers['${SITE_HOST_HEADER}'] = { value: request.headers.host ? request.headers.host.value : '' };\n` +
          `  return request;\n` +
          `}\n`,
      ),
    });
    const certificate = props.certificateArn
      ? acm.Certificate.fromCertificateArn(this, 'FunctionCertificate', props.certificateArn)
      : undefined;
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `Slipway functions: *.${props.functionDomain}`,
      ...(certificate ? { domainNames: [`*.${props.functionDomain}`], certificate } : {}),
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: new origins.FunctionUrlOrigin(this.routerUrl, {
          // CloudFront's longest wait without a quota increase; the door answers 504 at 60 s itself.
          readTimeout: Duration.seconds(60),
        }),
        // The spec: plain HTTP redirects to HTTPS.
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        // Every call reaches the function: nothing is cached at the edge.
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        compress: false,
        functionAssociations: [{ function: copyHost, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      },
    });

    new CfnOutput(this, 'FunctionsDistributionDomain', {
      value: this.distribution.distributionDomainName,
      description: `Point *.${props.functionDomain} (CNAME or alias) at this name`,
    });

    for (const [rule, reason] of [
      [
        'AwsSolutions-CFR1',
        'Functions are public by the spec for every country; geo rules belong to custom domains, which functions do not have.',
      ],
      ['AwsSolutions-CFR2', 'WAF is an operator choice with its own cost; the door bounds bodies (10 MiB) and time (60 s) itself.'],
      ['AwsSolutions-CFR3', 'Access logs would record HTTPS calls, which the spec says are not recorded.'],
      [
        'AwsSolutions-CFR4',
        'With a certificate the policy is TLSv1.2_2021; without one the distribution is only the default cloudfront.net test name.',
      ],
    ] as const) {
      Validations.of(this.distribution).acknowledge({ id: rule, reason });
    }
  }

  /**
   * The invocations worker (lib/workers.ts `function-invocations`) runs each
   * queued invocation as a task: it gets the cluster, the task definition, the
   * compute subnets and security group in its environment, RunTask of that
   * task definition, and DescribeTasks and StopTask of the cluster's tasks.
   */
  connectInvocationsWorker(worker: lambda.Function): void {
    const stack = Stack.of(this);
    worker.addEnvironment(cloudHostVariables.taskCluster, this.cluster.clusterArn);
    worker.addEnvironment(cloudHostVariables.taskDefinitionArn, this.taskDefinition.taskDefinitionArn);
    worker.addEnvironment(
      cloudHostVariables.subnetIds,
      this.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds.join(','),
    );
    worker.addEnvironment(cloudHostVariables.securityGroupId, this.computeSecurityGroup.securityGroupId);
    this.grantRunInvocationTask(worker);
    // A task's ARN is task/{cluster name}/{id}: the grant covers this cluster's tasks only.
    const clusterTasks = stack.formatArn({
      service: 'ecs',
      resource: 'task',
      resourceName: `${this.cluster.clusterName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    worker.role!.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:DescribeTasks', 'ecs:StopTask'],
        resources: [clusterTasks],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    const rendered = (value: string) => (Token.isUnresolved(value) ? `<AWS::${value === stack.region ? 'Region' : 'AccountId'}>` : value);
    const clusterId = stack.getLogicalId(this.cluster.node.defaultChild as ecs.CfnCluster);
    Validations.of(worker.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:${rendered(stack.region)}:${rendered(stack.account)}:task/<${clusterId}>/*]`,
      reason:
        'Each queued invocation is a new task whose id ECS makes at RunTask, so the worker describes and stops tasks by the ' +
        "invocations cluster's task prefix only (and the ecs:cluster condition).",
    });
  }

  /**
   * The sweep of user-function Lambdas (handlers/workers/cloud-sweep.ts): it learns the prefix, lists the
   * account's functions (ListFunctions has no resource-level scope), reads the tags of and deletes only those
   * under the prefix.
   */
  connectSweepWorker(worker: lambda.Function): void {
    const stack = Stack.of(this);
    worker.addEnvironment(cloudHostVariables.namePrefix, this.functionNamePrefix);
    worker.role!.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:ListFunctions'], resources: ['*'] }));
    const prefixed = stack.formatArn({
      service: 'lambda',
      resource: 'function',
      resourceName: `${this.functionNamePrefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const scoped = new iam.PolicyStatement({ actions: ['lambda:ListTags', 'lambda:DeleteFunction'], resources: [prefixed] });
    worker.role!.addToPrincipalPolicy(scoped);
    const rendered = (value: string) => (Token.isUnresolved(value) ? `<AWS::${value === stack.region ? 'Region' : 'AccountId'}>` : value);
    const account = `${rendered(stack.region)}:${rendered(stack.account)}`;
    Validations.of(worker.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:${account}:function:${this.functionNamePrefix}*]`,
      reason:
        "The router makes one Lambda per built function under the stack's prefix at run time; " +
        'the sweep reads the tags of and deletes only those.',
    });
    Validations.of(worker.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Lambda ListFunctions accepts no resource-level restriction: listing is account-wide; the sweep acts on its prefix only.',
    });
  }

  /**
   * What the queued-invocations worker needs to start a runner task: RunTask
   * of this task definition in this cluster, and passing its two roles to ECS.
   */
  grantRunInvocationTask(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:RunTask'],
        resources: [this.taskDefinition.taskDefinitionArn],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.taskDefinition.taskRole.roleArn, this.taskDefinition.obtainExecutionRole().roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
      }),
    );
  }
}

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { DockerImageAsset, Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { cloudHostVariables } from '../lib/functions/hosts/cloud/variables.ts';
import { bundleRuntimeEnvironment, repoRoot } from './bundling.ts';
import { InlineGrantsRole } from './functions.ts';
import { doorSubnetGroup, functionsVpcCidr } from './functions-network.ts';
import { doorUses, grantDoorCalls, type RouterProps, type UserFunctionParts, userFunctionVariables } from './functions-router.ts';
import { DOOR_ORIGIN_ID } from './functions-viewer.ts';
import { grantUses } from './grants.ts';
import { lambdaBundles } from './lambda-bundles.ts';

/** The container door's server, bundled with the stack's Lambda bundles (every handlers/edge/*.ts file is). */
export const doorServerHandler = 'handlers/edge/functions-door-server.ts';
/** The folder of the door image's Dockerfile; the bundle is staged beside it at synth. */
export const doorImageDirectory = path.join(repoRoot, 'infra/door-image');
/** The one container of the door's task definition. */
export const DOOR_CONTAINER_NAME = 'door';
const DOOR_PORT = 8080;
const DOOR_HEALTH_PORT = 8081;
/** Over the door's 60 s budget, so the load balancer never cuts a request the door still answers. */
const DOOR_IDLE_TIMEOUT = Duration.seconds(75);

/** The image's build context: the Dockerfile and the server's bundle (index.mjs and its source map), as the bundles hold it. */
function stageDoorImage(): string {
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-door-image-'));
  fs.copyFileSync(path.join(doorImageDirectory, 'Dockerfile'), path.join(context, 'Dockerfile'));
  const bundle = lambdaBundles().folderOf(doorServerHandler);
  for (const file of fs.readdirSync(bundle)) fs.copyFileSync(path.join(bundle, file), path.join(context, file));
  return context;
}

/** A CDK-rendered (camelCase) CloudFront property as CloudFormation spells it; tokens are strings and pass as they are. */
function cloudFormationOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloudFormationOf);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([key, v]) => [key[0]!.toUpperCase() + key.slice(1), cloudFormationOf(v)]),
  );
}

/** The door's Fargate task definition: one `door` container, the router's environment and, in its task role, exactly the router's grants. */
function doorTaskDefinition(scope: Construct, props: RouterProps, made: UserFunctionParts) {
  const stack = Stack.of(scope);
  const taskRole = new InlineGrantsRole(scope, 'DoorTaskRole', {
    description: 'Task role of the container door: the grants of the functions router',
    assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }),
  });
  grantUses(taskRole, doorUses, props.grants);
  grantDoorCalls(taskRole, stack, made, props.grants.state.buckets.bundles);

  const context = stageDoorImage();
  let image: DockerImageAsset;
  try {
    // The asset copies the context into the cloud assembly here, so the staging folder can go at once.
    image = new DockerImageAsset(scope, 'DoorImage', { directory: context, file: 'Dockerfile', platform: Platform.LINUX_AMD64 });
  } finally {
    fs.rmSync(context, { recursive: true, force: true });
  }
  const taskDefinition = new ecs.FargateTaskDefinition(scope, 'DoorTask', {
    cpu: 512,
    memoryLimitMiB: 1024,
    runtimePlatform: { operatingSystemFamily: ecs.OperatingSystemFamily.LINUX, cpuArchitecture: ecs.CpuArchitecture.X86_64 },
    taskRole,
  });
  const logGroup = new logs.LogGroup(scope, 'DoorLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
  taskDefinition.addContainer(DOOR_CONTAINER_NAME, {
    image: ecs.ContainerImage.fromDockerImageAsset(image),
    essential: true,
    readonlyRootFilesystem: true,
    // The image's `node` user; never root.
    user: '1000:1000',
    environment: {
      ...props.environment,
      ...userFunctionVariables(made),
      ...bundleRuntimeEnvironment,
      [cloudHostVariables.doorPort]: String(DOOR_PORT),
      [cloudHostVariables.doorHealthPort]: String(DOOR_HEALTH_PORT),
    },
    portMappings: [{ containerPort: DOOR_PORT }, { containerPort: DOOR_HEALTH_PORT }],
    // SIGTERM drains requests in flight within the 60 s budget; ECS kills the container after this.
    stopTimeout: Duration.seconds(90),
    logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'door' }),
  });
  Validations.of(taskDefinition).acknowledge({
    id: 'AwsSolutions-ECS2',
    reason:
      "The door's environment is the router Lambda's: resource names, ARNs, the function domain and its ports. Secrets are read from " +
      'Secrets Manager at run time, never passed in the environment.',
  });
  Validations.of(taskDefinition).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'The execution role pulls the door image: ecr:GetAuthorizationToken has no resource-level permissions; the pull itself is limited to the asset repository.',
  });
  return { image, taskDefinition, taskRole };
}

/**
 * The container door (handlers/edge/functions-door-server.ts): for request bodies the router's function URL cannot
 * take (a binary body over about 4.4 MiB arrives base64 in a 6 MB event), the same door on Fargate, two tasks in the
 * Door subnets behind an internal load balancer, which CloudFront reaches through a VPC origin. Returns the origin
 * as the distribution's Origins list takes it (id DOOR_ORIGIN_ID).
 */
export function containerDoor(scope: Construct, props: RouterProps, made: UserFunctionParts) {
  const doorSubnets: ec2.SubnetSelection = { subnetGroupName: doorSubnetGroup };
  const cluster = new ecs.Cluster(scope, 'DoorCluster', { vpc: made.vpc, containerInsightsV2: ecs.ContainerInsights.ENABLED });
  const { image, taskDefinition, taskRole } = doorTaskDefinition(scope, props, made);

  const loadBalancerSecurityGroup = new ec2.SecurityGroup(scope, 'DoorLoadBalancerSecurityGroup', {
    vpc: made.vpc,
    description: 'Slipway container door load balancer: HTTP from CloudFront VPC origin interfaces in the VPC',
    allowAllOutbound: false,
  });
  // CloudFront's VPC-origin interfaces live in the VPC; the compute subnets' ACL keeps user code out of 10.0.0.0/8.
  loadBalancerSecurityGroup.addIngressRule(ec2.Peer.ipv4(functionsVpcCidr), ec2.Port.tcp(80), 'CloudFront VPC origin');
  const taskSecurityGroup = new ec2.SecurityGroup(scope, 'DoorSecurityGroup', {
    vpc: made.vpc,
    description: 'Slipway container door tasks: door and health ports from the load balancer only, HTTPS out',
    allowAllOutbound: false,
  });
  taskSecurityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'AWS APIs (DynamoDB, S3, Lambda, ECR, logs) through the NAT');

  const service = new ecs.FargateService(scope, 'DoorService', {
    cluster,
    taskDefinition,
    desiredCount: 2,
    vpcSubnets: doorSubnets,
    securityGroups: [taskSecurityGroup],
    assignPublicIp: false,
    minHealthyPercent: 100,
    circuitBreaker: { rollback: true },
  });
  const loadBalancer = new elbv2.ApplicationLoadBalancer(scope, 'DoorLoadBalancer', {
    vpc: made.vpc,
    internetFacing: false,
    vpcSubnets: doorSubnets,
    securityGroup: loadBalancerSecurityGroup,
    idleTimeout: DOOR_IDLE_TIMEOUT,
  });
  const listener = loadBalancer.addListener('Http', { port: 80, protocol: elbv2.ApplicationProtocol.HTTP, open: false });
  const targetGroup = listener.addTargets('Door', {
    port: DOOR_PORT,
    protocol: elbv2.ApplicationProtocol.HTTP,
    targets: [service.loadBalancerTarget({ containerName: DOOR_CONTAINER_NAME, containerPort: DOOR_PORT })],
    healthCheck: { port: String(DOOR_HEALTH_PORT), path: '/health', healthyHttpCodes: '200', interval: Duration.seconds(10) },
    // A stopping task's requests in flight finish within the budget before it is gone.
    deregistrationDelay: DOOR_IDLE_TIMEOUT,
  });
  // The listener opened the door port from the load balancer's group; the health check port is opened here.
  taskSecurityGroup.connections.allowFrom(loadBalancerSecurityGroup, ec2.Port.tcp(DOOR_HEALTH_PORT), 'Load balancer health check');

  const vpcOrigin = origins.VpcOrigin.withApplicationLoadBalancer(loadBalancer, {
    httpPort: 80,
    protocolPolicy: cloudfront.OriginProtocolPolicy.HTTP_ONLY,
    // The door answers 504 at 60 s itself, as the router's origin is given.
    readTimeout: Duration.seconds(60),
  });
  const origin = cloudFormationOf(vpcOrigin.bind(new Construct(scope, 'DoorOrigin'), { originId: DOOR_ORIGIN_ID }).originProperty!);
  Validations.of(loadBalancer).acknowledge({
    id: 'AwsSolutions-ELB2',
    reason: 'Access logs would record HTTPS calls to functions, which the spec says are not recorded (as on the distribution).',
  });
  return { cluster, image, taskDefinition, taskRole, service, loadBalancer, targetGroup, origin: origin as object };
}

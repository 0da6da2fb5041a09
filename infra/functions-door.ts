import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ArnFormat, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
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
import { renderedOrigin } from './cloudfront-origins.ts';
import { InlineGrantsRole } from './functions.ts';
import { readCapacitySettings } from './context.ts';
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

/** The door's instance in the default shape: 2 vCPUs (burstable), 1 GiB, about $6.90 a month on demand. */
export const doorInstanceType = 't3a.micro';
/** Of the instance's 1 GiB, what the door's container may use; the rest is the system's and the ECS agent's. */
const DOOR_INSTANCE_TASK_MEMORY_MIB = 768;

/**
 * The door's task definition: one `door` container, the router's environment and, in its task role, exactly the
 * router's grants. On Fargate (`doorTasks` over 0) 0.5 vCPU and 1 GiB; on the door instance (the default) an EC2
 * task in bridge mode whose ports are the instance's own, as the VPC origin reaches the instance.
 */
function doorTaskDefinition(scope: Construct, props: RouterProps, made: UserFunctionParts, onInstance: boolean) {
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
  const taskDefinition: ecs.TaskDefinition = onInstance
    ? new ecs.Ec2TaskDefinition(scope, 'DoorTask', { networkMode: ecs.NetworkMode.BRIDGE, taskRole })
    : new ecs.FargateTaskDefinition(scope, 'DoorTask', {
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
    ...(onInstance ? { memoryLimitMiB: DOOR_INSTANCE_TASK_MEMORY_MIB } : {}),
    // On the instance the ports are the instance's (bridge mode, static host ports): the VPC origin's target port.
    portMappings: [DOOR_PORT, DOOR_HEALTH_PORT].map((port) =>
      onInstance ? { containerPort: port, hostPort: port } : { containerPort: port },
    ),
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

/** The parts of the door an operator watches (and its alarms name): the service always; its instance, or its load balancer and target group. */
export interface ContainerDoorParts {
  cluster: ecs.Cluster;
  image: DockerImageAsset;
  taskDefinition: ecs.TaskDefinition;
  taskRole: iam.Role;
  service: ecs.BaseService;
  /** The default shape: the instance CloudFront's VPC origin targets (watch its status checks). */
  instance?: ec2.Instance;
  /** With `doorTasks` over 0: the internal ALB and its target group (watch unhealthy targets). */
  loadBalancer?: elbv2.ApplicationLoadBalancer;
  targetGroup?: elbv2.ApplicationTargetGroup;
  /** The origin as the distribution's Origins list takes it (id DOOR_ORIGIN_ID). */
  origin: object;
}

/** The VPC origin's rendering as the distribution's Origins list takes it. */
function originOf(scope: Construct, vpcOrigin: origins.VpcOrigin): object {
  return renderedOrigin(scope, 'DoorOrigin', vpcOrigin, DOOR_ORIGIN_ID);
}

/**
 * The container door (handlers/edge/functions-door-server.ts): for request bodies the router's function URL cannot
 * take (a binary body over about 4.4 MiB arrives base64 in a 6 MB event), the same door in a container, which
 * CloudFront reaches through a VPC origin. By default one task on one EC2 instance in a Door subnet, the VPC
 * origin's target (no load balancer: an ALB alone costs $16.43 a month idle); with the context value `doorTasks`
 * over 0, that many Fargate tasks behind an internal load balancer.
 */
export function containerDoor(scope: Construct, props: RouterProps, made: UserFunctionParts): ContainerDoorParts {
  const { doorTasks } = readCapacitySettings(scope);
  // Container Insights bills its metrics as custom metrics for as long as a task runs (several dollars a month for
  // the one door service): off for the default shape, whose service and instance publish the free AWS/ECS and
  // AWS/EC2 metrics (a service's CPUUtilization has no data points once no task runs; the instance's status checks).
  const cluster = new ecs.Cluster(scope, 'DoorCluster', {
    vpc: made.vpc,
    containerInsightsV2: doorTasks > 0 ? ecs.ContainerInsights.ENABLED : ecs.ContainerInsights.DISABLED,
  });
  if (doorTasks === 0)
    Validations.of(cluster).acknowledge({
      id: 'AwsSolutions-ECS4',
      reason:
        "Container Insights' custom metrics would cost several dollars a month for the one door task; the free AWS/ECS service metrics and the instance's status checks watch it.",
    });
  return doorTasks > 0 ? doorOnFargate(scope, props, made, cluster, doorTasks) : doorOnInstance(scope, props, made, cluster);
}

/**
 * What the ECS agent does for the door instance (as CDK gives an Auto Scaling group's instances); the task's own calls
 * use the task role, the image pull and its logs the task's execution role.
 */
function doorInstanceRole(scope: Construct, cluster: ecs.Cluster): InlineGrantsRole {
  const role = new InlineGrantsRole(scope, 'DoorInstanceRole', {
    description: 'Instance role of the container door: the ECS agent of its cluster',
    assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
  });
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: [
        'ecs:DeregisterContainerInstance',
        'ecs:RegisterContainerInstance',
        'ecs:SubmitAttachmentStateChanges',
        'ecs:SubmitContainerStateChange',
        'ecs:SubmitTaskStateChange',
      ],
      resources: [cluster.clusterArn],
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['ecs:Poll', 'ecs:StartTelemetrySession'],
      resources: [
        Stack.of(scope).formatArn({
          service: 'ecs',
          resource: 'container-instance',
          resourceName: `${cluster.clusterName}/*`,
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
      conditions: { ArnEquals: { 'ecs:cluster': cluster.clusterArn } },
    }),
  );
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ecs:DiscoverPollEndpoint'], resources: ['*'] }));
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: "The ECS agent's DiscoverPollEndpoint has no resource-level permissions.",
  });
  const stack = Stack.of(scope);
  const rendered = (value: string, name: string) => (Token.isUnresolved(value) ? `<AWS::${name}>` : value);
  const clusterId = stack.getLogicalId(cluster.node.defaultChild as ecs.CfnCluster);
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:${rendered(stack.region, 'Region')}:${rendered(stack.account, 'AccountId')}:container-instance/<${clusterId}>/*]`,
    reason:
      "The ECS agent polls for the tasks of its own instance: any container instance of the door's cluster (the ecs:cluster condition too).",
  });
  return role;
}

/**
 * One task on one instance (ECS on EC2, bridge mode, the door's ports the instance's). The instance is a plain
 * AWS::EC2::Instance, not an Auto Scaling group, because a VPC origin names one instance: EC2's simplified
 * automatic recovery (on by default for t3a) moves it to other hardware with the same id and address, and the
 * ECS service restarts a task that stopped. A deploy of a new task definition stops the old task before the new one
 * starts (one instance, fixed ports): the door is away for seconds then.
 */
function doorOnInstance(scope: Construct, props: RouterProps, made: UserFunctionParts, cluster: ecs.Cluster): ContainerDoorParts {
  const { image, taskDefinition, taskRole } = doorTaskDefinition(scope, props, made, true);
  const securityGroup = new ec2.SecurityGroup(scope, 'DoorSecurityGroup', {
    vpc: made.vpc,
    description: 'Slipway container door instance: the door port from CloudFront VPC origin interfaces in the VPC, HTTPS out',
    allowAllOutbound: false,
  });
  // CloudFront's VPC-origin interfaces live in the VPC; the compute subnets' ACL keeps user code out of 10.0.0.0/8.
  securityGroup.addIngressRule(ec2.Peer.ipv4(functionsVpcCidr), ec2.Port.tcp(DOOR_PORT), 'CloudFront VPC origin');
  securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'AWS APIs (ECS, ECR, DynamoDB, S3, Lambda, logs) through the NAT');

  const role = doorInstanceRole(scope, cluster);

  const userData = ec2.UserData.forLinux();
  // The ECS-optimized image's agent joins the cluster named here. Containers in bridge mode cannot reach the
  // instance's metadata (IMDSv2 only, one hop), so only the task role's credentials are theirs.
  userData.addCommands(`echo ECS_CLUSTER=${cluster.clusterName} >> /etc/ecs/ecs.config`);
  const instance = new ec2.Instance(scope, 'DoorInstance', {
    vpc: made.vpc,
    // One subnet, the first Door subnet: a VPC origin names one instance.
    vpcSubnets: { subnetGroupName: doorSubnetGroup, onePerAz: true, availabilityZones: [made.vpc.availabilityZones[0]!] },
    instanceType: new ec2.InstanceType(doorInstanceType),
    machineImage: ecs.EcsOptimizedImage.amazonLinux2023(ecs.AmiHardwareType.STANDARD),
    securityGroup,
    role,
    userData,
    httpTokens: ec2.HttpTokens.REQUIRED,
    httpPutResponseHopLimit: 1,
    associatePublicIpAddress: false,
    // The ECS-optimized image's root device and its 30 GB, encrypted.
    blockDevices: [
      { deviceName: '/dev/xvda', volume: ec2.BlockDeviceVolume.ebs(30, { encrypted: true, volumeType: ec2.EbsDeviceVolumeType.GP3 }) },
    ],
  });
  Validations.of(instance).acknowledge({
    id: 'AwsSolutions-EC28',
    reason:
      "Detailed monitoring costs about $2 a month an instance; the door is watched through its status checks and its service's running tasks.",
  });
  Validations.of(instance).acknowledge({
    id: 'AwsSolutions-EC29',
    reason: 'The door instance holds no data: a deploy may replace it, EC2 automatic recovery restarts it, and it must go with the stack.',
  });

  const service = new ecs.Ec2Service(scope, 'DoorService', {
    // The same cluster, seen as one with EC2 capacity: the instance joins it by its user data, not through an
    // Auto Scaling group CDK would know of.
    cluster: ecs.Cluster.fromClusterAttributes(scope, 'DoorClusterWithInstance', {
      clusterName: cluster.clusterName,
      clusterArn: cluster.clusterArn,
      vpc: made.vpc,
      securityGroups: [securityGroup],
      hasEc2Capacity: true,
    }),
    taskDefinition,
    desiredCount: 1,
    // One instance and fixed host ports: the old task must stop before a new one can bind them.
    minHealthyPercent: 0,
    maxHealthyPercent: 100,
    circuitBreaker: { rollback: true },
  });
  // The service waits for the instance to join its cluster.
  service.node.addDependency(instance);

  const vpcOrigin = origins.VpcOrigin.withEc2Instance(instance, {
    httpPort: DOOR_PORT,
    protocolPolicy: cloudfront.OriginProtocolPolicy.HTTP_ONLY,
    // The door answers 504 at 60 s itself, as the router's origin is given.
    readTimeout: Duration.seconds(60),
  });
  return { cluster, image, taskDefinition, taskRole, service, instance, origin: originOf(scope, vpcOrigin) };
}

/** `doorTasks` Fargate tasks in the Door subnets behind an internal load balancer: more capacity, no single instance. */
function doorOnFargate(
  scope: Construct,
  props: RouterProps,
  made: UserFunctionParts,
  cluster: ecs.Cluster,
  doorTasks: number,
): ContainerDoorParts {
  const doorSubnets: ec2.SubnetSelection = { subnetGroupName: doorSubnetGroup };
  const { image, taskDefinition, taskRole } = doorTaskDefinition(scope, props, made, false);

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
    desiredCount: doorTasks,
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
  Validations.of(loadBalancer).acknowledge({
    id: 'AwsSolutions-ELB2',
    reason: 'Access logs would record HTTPS calls to functions, which the spec says are not recorded (as on the distribution).',
  });
  return { cluster, image, taskDefinition, taskRole, service, loadBalancer, targetGroup, origin: originOf(scope, vpcOrigin) };
}

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doorServerHandler } from '../../infra/functions-door.ts';
import { computeSubnets, doorSubnetGroup, functionsVpcCidr } from '../../infra/functions-network.ts';
import { lambdaBundles } from '../../infra/lambda-bundles.ts';
import { sharedFunctionsStack, synthesizeFunctionsStack } from '../support/functions-stack.ts';
import { withoutBundling } from '../support/stack-synth.ts';
import { statementsOfRole, type Statement } from '../support/iam-policies.ts';

/**
 * The container door in the template (infra/functions-door.ts, p25 contract): the Door subnets beside Compute, the
 * ECS service and its task, the internal load balancer, and the VPC origin CloudFront selects by id. What the
 * viewer function chooses is test/unit/functions-viewer.test.ts; the server itself test/unit/functions-door-server.test.ts.
 */
type Synthesized = ReturnType<typeof synthesizeFunctionsStack>;
/** The default shape (the door on one instance) and the heavier one (`doorTasks` 2: Fargate tasks behind an ALB). */
let synthesized: Synthesized;
let fargate: Synthesized;
beforeAll(() => {
  synthesized = sharedFunctionsStack();
  // Its cases read the template only: no bundles (test/support/stack-synth.ts).
  fargate = synthesizeFunctionsStack({ doorTasks: 2, ...withoutBundling });
}, 600_000);
afterAll(() => {
  fargate?.remove();
});

const resourcesOf = (type: string, s = synthesized) => Object.entries(s.resources).filter(([, r]) => r.Type === type);
const ref = (construct: { node: { defaultChild?: unknown } } | undefined, s = synthesized) => ({ Ref: s.idOf(construct!) });
const groupIdOf = (id: string) => ({ 'Fn::GetAtt': [id, 'GroupId'] });
const subnetRefs = (selection: { subnetGroupName: string }, s = synthesized) =>
  s.runtime.vpc.selectSubnets(selection).subnets.map((subnet) => ref(subnet as never, s));
const doorSubnets = (s = synthesized) => subnetRefs({ subnetGroupName: doorSubnetGroup }, s);
const rulesOfGroup = (type: 'AWS::EC2::SecurityGroupIngress' | 'AWS::EC2::SecurityGroupEgress', groupId: string, s = synthesized) =>
  resourcesOf(type, s)
    .map(([, r]) => r.Properties)
    .filter((p) => JSON.stringify(p.GroupId) === JSON.stringify(groupIdOf(groupId)));
const doorTask = (s = synthesized) => s.resources[s.idOf(s.runtime.doorTaskDefinition)]!.Properties;
const loadBalancer = () => fargate.resources[fargate.idOf(fargate.runtime.doorLoadBalancer!)]!.Properties;

describe('the network', () => {
  it('has a Door subnet group (private with egress, /24, one per AZ) beside Compute, outside the compute ACL', () => {
    const { resources, runtime, idOf } = synthesized;
    expect(doorSubnets()).toHaveLength(2);
    for (const { Ref: id } of doorSubnets()) {
      const subnet = resources[id]!.Properties;
      expect(subnet.CidrBlock).toMatch(/^10\.40\.\d+\.0\/24$/);
      expect(subnet.MapPublicIpOnLaunch).toBe(false);
      expect(subnet.Tags).toContainEqual({ Key: 'aws-cdk:subnet-type', Value: 'Private' });
    }
    expect(resources[idOf(runtime.vpc)]!.Properties.CidrBlock).toBe(functionsVpcCidr);
    // The compute ACL (which denies 10.0.0.0/8 both ways) holds the compute subnets and no other.
    const associated = resourcesOf('AWS::EC2::SubnetNetworkAclAssociation')
      .filter(([, r]) => JSON.stringify(r.Properties.NetworkAclId) === JSON.stringify(ref(runtime.computeNetworkAcl)))
      .map(([, r]) => r.Properties.SubnetId);
    expect(associated).toEqual(subnetRefs(computeSubnets as { subnetGroupName: string }));
  });

  it('gives the router and the function-lambdas worker the compute subnets only', () => {
    const { resources, runtime, prepareWorker, idOf } = synthesized;
    const compute = subnetRefs(computeSubnets as { subnetGroupName: string });
    expect(compute).toHaveLength(2);
    for (const fn of [runtime.router.fn, prepareWorker.fn]) {
      // A list of tokens joined with commas: { Fn::Join: ['', [subnet, ',', subnet]] }.
      const [, parts] = resources[idOf(fn)]!.Properties.Environment.Variables.FUNCTIONS_SUBNET_IDS['Fn::Join'];
      expect(parts.filter((part: unknown) => part !== ',')).toEqual(compute);
    }
  });
});

describe('the ECS service', () => {
  it("the task role holds exactly the router's grants (its own log group's aside), with no permissions boundary either", () => {
    const { resources, runtime, idOf } = synthesized;
    const router = idOf(runtime.router.role);
    const task = idOf(runtime.doorTaskRole);
    const grants = (roleId: string) =>
      statementsOfRole(resources, roleId).filter((s: Statement) => ![s.Action].flat().every((action) => action.startsWith('logs:')));
    expect(grants(task).length).toBeGreaterThan(8);
    expect(grants(task)).toEqual(grants(router));
    expect(doorTask().TaskRoleArn).toEqual({ 'Fn::GetAtt': [task, 'Arn'] });
    expect(resources[task]!.Properties.PermissionsBoundary).toBeUndefined();
    expect(resources[router]!.Properties.PermissionsBoundary).toBeUndefined();
    expect(resources[task]!.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({ Principal: { Service: 'ecs-tasks.amazonaws.com' }, Condition: expect.any(Object) }),
    ]);
  });

  it('the image: the Dockerfile of the contract and the server bundle, every SDK module inside it (no Docker at synth)', () => {
    const { outdir } = synthesized;
    const manifest = JSON.parse(fs.readFileSync(path.join(outdir, 'FunctionsTest.assets.json'), 'utf8'));
    const images = Object.values(manifest.dockerImages) as { source: { directory: string; dockerFile?: string } }[];
    const door = images.filter((image) => fs.existsSync(path.join(outdir, image.source.directory, 'index.mjs')));
    expect(door).toHaveLength(1);
    const staged = path.join(outdir, door[0]!.source.directory);
    expect(fs.readdirSync(staged).sort()).toEqual(['Dockerfile', 'index.mjs', 'index.mjs.map']);
    const instructions = fs
      .readFileSync(path.join(staged, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(instructions).toEqual([
      'FROM node:22.23.3-bookworm-slim',
      'WORKDIR /door',
      'COPY index.mjs /door/',
      'COPY index.mjs.map /door/',
      'USER node',
      'ENV NODE_ENV=production',
      'ENTRYPOINT ["node", "/door/index.mjs"]',
    ]);
    const bundle = fs.readFileSync(path.join(staged, 'index.mjs'));
    expect(bundle.equals(fs.readFileSync(path.join(lambdaBundles().folderOf(doorServerHandler), 'index.mjs')))).toBe(true);
    // In a task the SDK reaches the container credential endpoint through providers a Lambda bundle leaves out.
    expect(bundle.toString()).not.toMatch(/(from|import\()\s*["'](@aws-sdk|@smithy)\//);
    expect(bundle.toString()).toContain('AWS_CONTAINER_CREDENTIALS_RELATIVE_URI');
  });
});

describe('the default shape: the door on one instance', () => {
  const instance = () => synthesized.resources[synthesized.idOf(synthesized.runtime.doorInstance!)]!.Properties;

  it("no load balancer and no Fargate task: an EC2 task definition in bridge mode, the ports the instance's, 768 MiB", () => {
    expect(resourcesOf('AWS::ElasticLoadBalancingV2::LoadBalancer')).toEqual([]);
    expect(synthesized.runtime.doorLoadBalancer).toBeUndefined();
    const task = doorTask();
    expect(task).toMatchObject({ RequiresCompatibilities: ['EC2'], NetworkMode: 'bridge' });
    expect(task.ContainerDefinitions).toHaveLength(1);
    expect(task.ContainerDefinitions[0]).toMatchObject({
      Name: 'door',
      Essential: true,
      ReadonlyRootFilesystem: true,
      User: '1000:1000',
      Memory: 768,
      PortMappings: [
        { ContainerPort: 8080, HostPort: 8080, Protocol: 'tcp' },
        { ContainerPort: 8081, HostPort: 8081, Protocol: 'tcp' },
      ],
      LogConfiguration: { LogDriver: 'awslogs' },
    });
  });

  it('a t3a.micro of the ECS-optimized image in the first Door subnet joins the door cluster; IMDSv2, one hop, an encrypted 30 GB disk', () => {
    const { resources, runtime, idOf } = synthesized;
    expect(instance()).toMatchObject({
      InstanceType: 't3a.micro',
      MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1 },
      BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { Encrypted: true, VolumeSize: 30, VolumeType: 'gp3' } }],
      NetworkInterfaces: [{ AssociatePublicIpAddress: false, SubnetId: doorSubnets()[0] }],
    });
    expect(JSON.stringify(instance().ImageId)).toContain('ecsoptimized');
    expect(instance().UserData).toEqual({
      'Fn::Base64': { 'Fn::Join': ['', ['#!/bin/bash\necho ECS_CLUSTER=', ref(runtime.doorCluster), ' >> /etc/ecs/ecs.config']] },
    });
    // Its role is the ECS agent's of this cluster; the door's own calls use the task role.
    const profile = resources[instance().IamInstanceProfile.Ref]!.Properties;
    const [role] = profile.Roles as { Ref: string }[];
    const actions = statementsOfRole(resources, role!.Ref).flatMap((s: Statement) => [s.Action].flat());
    expect(actions.sort()).toEqual(
      [
        'ecs:DeregisterContainerInstance',
        'ecs:DiscoverPollEndpoint',
        'ecs:Poll',
        'ecs:RegisterContainerInstance',
        'ecs:StartTelemetrySession',
        'ecs:SubmitAttachmentStateChanges',
        'ecs:SubmitContainerStateChange',
        'ecs:SubmitTaskStateChange',
      ].sort(),
    );
    expect(role!.Ref).not.toBe(idOf(runtime.doorTaskRole));
  });

  it('its group takes the door port from the VPC only (CloudFront VPC origin interfaces) and lets out HTTPS only', () => {
    const group = synthesized.resources[instance().NetworkInterfaces[0].GroupSet[0]['Fn::GetAtt'][0]]!.Properties;
    expect(group.SecurityGroupIngress).toEqual([
      expect.objectContaining({ CidrIp: functionsVpcCidr, IpProtocol: 'tcp', FromPort: 8080, ToPort: 8080 }),
    ]);
    expect(group.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
    ]);
  });

  it('an EC2 service of one task that stops the old task before starting a new one, after the instance exists', () => {
    const { resources, runtime, idOf } = synthesized;
    const service = resources[idOf(runtime.doorService)]!;
    expect(service.Properties).toMatchObject({
      Cluster: ref(runtime.doorCluster),
      LaunchType: 'EC2',
      DesiredCount: 1,
      DeploymentConfiguration: {
        MinimumHealthyPercent: 0,
        MaximumPercent: 100,
        DeploymentCircuitBreaker: { Enable: true, Rollback: true },
      },
    });
    expect(service.Properties.LoadBalancers).toBeUndefined();
    expect((service as { DependsOn?: string[] }).DependsOn).toContain(idOf(runtime.doorInstance!));
  });

  it('CloudFront reaches the instance through a VPC origin (HTTP 8080, 60 s) with the id door-large-bodies', () => {
    const { resources, runtime, idOf } = synthesized;
    const [[vpcOriginId, vpcOrigin]] = resourcesOf('AWS::CloudFront::VpcOrigin') as unknown as [
      [string, { Properties: Record<string, any> }],
    ];
    const instanceId = idOf(runtime.doorInstance!);
    expect(vpcOrigin.Properties.VpcOriginEndpointConfig).toMatchObject({ HTTPPort: 8080, OriginProtocolPolicy: 'http-only' });
    expect(JSON.stringify(vpcOrigin.Properties.VpcOriginEndpointConfig.Arn)).toContain(`":instance/",{"Ref":"${instanceId}"}`);
    const config = resources[idOf(runtime.distribution)]!.Properties.DistributionConfig;
    expect(config.Origins.find((o: { Id: string }) => o.Id === 'door-large-bodies')).toEqual({
      Id: 'door-large-bodies',
      DomainName: { 'Fn::GetAtt': [instanceId, 'PrivateDnsName'] },
      VpcOriginConfig: { VpcOriginId: { 'Fn::GetAtt': [vpcOriginId, 'Id'] }, OriginReadTimeout: 60 },
    });
    expect(config.CacheBehaviors).toBeUndefined();
  });
});

describe('with doorTasks: the Fargate service', () => {
  it('with doorTasks, the Fargate task definition: X86_64, 512 CPU, 1024 MiB, one container `door` (read-only root, 1000:1000, 8080 and 8081, awslogs)', () => {
    const { resources, runtime, idOf } = fargate;
    const task = doorTask(fargate);
    expect(task).toMatchObject({
      RequiresCompatibilities: ['FARGATE'],
      NetworkMode: 'awsvpc',
      Cpu: '512',
      Memory: '1024',
      RuntimePlatform: { CpuArchitecture: 'X86_64', OperatingSystemFamily: 'LINUX' },
    });
    expect(task.ContainerDefinitions).toHaveLength(1);
    const [container] = task.ContainerDefinitions;
    expect(container).toMatchObject({
      Name: 'door',
      Essential: true,
      ReadonlyRootFilesystem: true,
      User: '1000:1000',
      PortMappings: [
        { ContainerPort: 8080, Protocol: 'tcp' },
        { ContainerPort: 8081, Protocol: 'tcp' },
      ],
      LogConfiguration: { LogDriver: 'awslogs' },
    });
    // The router's environment (the stack's, the cloud host's variables, source maps) and the door's two ports.
    const environment = Object.fromEntries(container.Environment.map((e: { Name: string; Value: unknown }) => [e.Name, e.Value]));
    const routerEnvironment = resources[idOf(runtime.router.fn)]!.Properties.Environment.Variables;
    expect(environment).toEqual({ ...routerEnvironment, SLIPWAY_DOOR_PORT: '8080', SLIPWAY_DOOR_HEALTH_PORT: '8081' });
  });

  it('with doorTasks 2, 2 Fargate tasks in the Door subnets and a cluster of their own, behind a group open to the load balancer only, HTTPS out', () => {
    const { resources, runtime, idOf } = fargate;
    const service = resources[idOf(runtime.doorService)]!.Properties;
    const taskGroup = service.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups[0]['Fn::GetAtt'][0] as string;
    const lbGroup = loadBalancer().SecurityGroups[0]['Fn::GetAtt'][0] as string;
    expect(service).toMatchObject({
      Cluster: ref(runtime.doorCluster, fargate),
      TaskDefinition: ref(runtime.doorTaskDefinition, fargate),
      DesiredCount: 2,
      LaunchType: 'FARGATE',
      NetworkConfiguration: { AwsvpcConfiguration: { AssignPublicIp: 'DISABLED', Subnets: doorSubnets(fargate) } },
      LoadBalancers: [{ ContainerName: 'door', ContainerPort: 8080, TargetGroupArn: { Ref: expect.any(String) } }],
    });
    expect(service.Cluster).not.toEqual(ref(runtime.cluster, fargate));
    expect(resources[taskGroup]!.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
    ]);
    expect(resources[taskGroup]!.Properties.SecurityGroupIngress).toBeUndefined();
    const ingress = rulesOfGroup('AWS::EC2::SecurityGroupIngress', taskGroup, fargate);
    expect(ingress.map((r) => [r.FromPort, r.ToPort, r.SourceSecurityGroupId])).toEqual([
      [8080, 8080, groupIdOf(lbGroup)],
      [8081, 8081, groupIdOf(lbGroup)],
    ]);
  });
});

describe('with doorTasks: the load balancer and the VPC origin', () => {
  it('an internal ALB in the Door subnets takes TCP 80 from the VPC only, idles longer than the 60 s budget', () => {
    const { resources } = fargate;
    const lb = loadBalancer();
    expect(lb).toMatchObject({ Scheme: 'internal', Type: 'application', Subnets: doorSubnets(fargate) });
    const idle = lb.LoadBalancerAttributes.find((a: { Key: string }) => a.Key === 'idle_timeout.timeout_seconds');
    expect(Number(idle.Value)).toBeGreaterThan(60);
    const lbGroup = lb.SecurityGroups[0]['Fn::GetAtt'][0] as string;
    expect(resources[lbGroup]!.Properties.SecurityGroupIngress).toEqual([
      expect.objectContaining({ CidrIp: '10.40.0.0/16', IpProtocol: 'tcp', FromPort: 80, ToPort: 80 }),
    ]);
    expect(rulesOfGroup('AWS::EC2::SecurityGroupIngress', lbGroup, fargate)).toEqual([]);
    // Out only to the tasks' door and health ports.
    expect(JSON.stringify(resources[lbGroup]!.Properties.SecurityGroupEgress ?? [])).not.toContain('0.0.0.0/0');
    expect(rulesOfGroup('AWS::EC2::SecurityGroupEgress', lbGroup, fargate).map((r) => [r.FromPort, r.ToPort])).toEqual([
      [8080, 8080],
      [8081, 8081],
    ]);
  });

  it('its HTTP listener on 80 forwards to an IP target group on 8080, health-checked on 8081 at /health', () => {
    const { idOf, runtime } = fargate;
    const [[, listener]] = resourcesOf('AWS::ElasticLoadBalancingV2::Listener', fargate).filter(
      ([, r]) => JSON.stringify(r.Properties.LoadBalancerArn) === JSON.stringify(ref(runtime.doorLoadBalancer, fargate)),
    ) as unknown as [[string, { Properties: Record<string, any> }]];
    expect(listener.Properties).toMatchObject({ Port: 80, Protocol: 'HTTP' });
    const [action] = listener.Properties.DefaultActions;
    expect(action.Type).toBe('forward');
    const group = fargate.resources[action.TargetGroupArn.Ref]!.Properties;
    expect(group).toMatchObject({
      TargetType: 'ip',
      Port: 8080,
      Protocol: 'HTTP',
      HealthCheckPort: '8081',
      HealthCheckPath: '/health',
      Matcher: { HttpCode: '200' },
      VpcId: ref(runtime.vpc, fargate),
    });
    expect(fargate.resources[idOf(runtime.doorService)]!.Properties.LoadBalancers[0].TargetGroupArn).toEqual(action.TargetGroupArn);
  });

  it('CloudFront reaches it through a VPC origin (HTTP 80, 60 s) with the id door-large-bodies; the default behavior stays the router', () => {
    const { resources, runtime, idOf } = fargate;
    const [[vpcOriginId, vpcOrigin]] = resourcesOf('AWS::CloudFront::VpcOrigin', fargate) as unknown as [
      [string, { Properties: Record<string, any> }],
    ];
    expect(vpcOrigin.Properties.VpcOriginEndpointConfig).toMatchObject({
      Arn: ref(runtime.doorLoadBalancer, fargate),
      HTTPPort: 80,
      OriginProtocolPolicy: 'http-only',
    });
    const config = resources[idOf(runtime.distribution)]!.Properties.DistributionConfig;
    expect(config.Origins).toHaveLength(2);
    const door = config.Origins.find((o: { Id: string }) => o.Id === 'door-large-bodies');
    expect(door).toEqual({
      Id: 'door-large-bodies',
      DomainName: { 'Fn::GetAtt': [idOf(runtime.doorLoadBalancer!), 'DNSName'] },
      VpcOriginConfig: { VpcOriginId: { 'Fn::GetAtt': [vpcOriginId, 'Id'] }, OriginReadTimeout: 60 },
    });
    const router = config.Origins.find((o: { Id: string }) => o.Id !== 'door-large-bodies');
    expect(JSON.stringify(router.DomainName)).toContain(idOf(runtime.routerUrl as never));
    expect(config.DefaultCacheBehavior.TargetOriginId).toBe(router.Id);
    // Only the viewer function sends a request to the door: no behavior claims a path for it.
    expect(config.CacheBehaviors).toBeUndefined();
  });
});

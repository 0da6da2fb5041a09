import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doorServerHandler } from '../../infra/functions-door.ts';
import { computeSubnets, doorSubnetGroup, functionsVpcCidr } from '../../infra/functions-network.ts';
import { lambdaBundles } from '../../infra/lambda-bundles.ts';
import { synthesizeFunctionsStack } from '../support/functions-stack.ts';
import { statementsOfRole, type Statement } from '../support/iam-policies.ts';

/**
 * The container door in the template (infra/functions-door.ts, p25 contract): the Door subnets beside Compute, the
 * ECS service and its task, the internal load balancer, and the VPC origin CloudFront selects by id. What the
 * viewer function chooses is test/unit/functions-viewer.test.ts; the server itself test/unit/functions-door-server.test.ts.
 */
let synthesized: ReturnType<typeof synthesizeFunctionsStack>;
beforeAll(() => {
  synthesized = synthesizeFunctionsStack();
}, 300_000);
afterAll(() => synthesized?.remove());

const resourcesOf = (type: string) => Object.entries(synthesized.resources).filter(([, r]) => r.Type === type);
const ref = (construct: { node: { defaultChild?: unknown } }) => ({ Ref: synthesized.idOf(construct) });
const groupIdOf = (id: string) => ({ 'Fn::GetAtt': [id, 'GroupId'] });
const subnetRefs = (selection: { subnetGroupName: string }) =>
  synthesized.runtime.vpc.selectSubnets(selection).subnets.map((subnet) => ref(subnet as never));
const doorSubnets = () => subnetRefs({ subnetGroupName: doorSubnetGroup });
const rulesOfGroup = (type: 'AWS::EC2::SecurityGroupIngress' | 'AWS::EC2::SecurityGroupEgress', groupId: string) =>
  resourcesOf(type)
    .map(([, r]) => r.Properties)
    .filter((p) => JSON.stringify(p.GroupId) === JSON.stringify(groupIdOf(groupId)));
const doorTask = () => synthesized.resources[synthesized.idOf(synthesized.runtime.doorTaskDefinition)]!.Properties;
const loadBalancer = () => synthesized.resources[synthesized.idOf(synthesized.runtime.doorLoadBalancer)]!.Properties;

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

  it('the task definition: X86_64, 512 CPU, 1024 MiB, one container `door` (read-only root, 1000:1000, 8080 and 8081, awslogs)', () => {
    const { resources, runtime, idOf } = synthesized;
    const task = doorTask();
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

  it('2 Fargate tasks in the Door subnets and a cluster of their own, behind a group open to the load balancer only, HTTPS out', () => {
    const { resources, runtime, idOf } = synthesized;
    const service = resources[idOf(runtime.doorService)]!.Properties;
    const taskGroup = service.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups[0]['Fn::GetAtt'][0] as string;
    const lbGroup = loadBalancer().SecurityGroups[0]['Fn::GetAtt'][0] as string;
    expect(service).toMatchObject({
      Cluster: ref(runtime.doorCluster),
      TaskDefinition: ref(runtime.doorTaskDefinition),
      DesiredCount: 2,
      LaunchType: 'FARGATE',
      NetworkConfiguration: { AwsvpcConfiguration: { AssignPublicIp: 'DISABLED', Subnets: doorSubnets() } },
      LoadBalancers: [{ ContainerName: 'door', ContainerPort: 8080, TargetGroupArn: { Ref: expect.any(String) } }],
    });
    expect(service.Cluster).not.toEqual(ref(runtime.cluster));
    expect(resources[taskGroup]!.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '0.0.0.0/0', IpProtocol: 'tcp', FromPort: 443, ToPort: 443 }),
    ]);
    expect(resources[taskGroup]!.Properties.SecurityGroupIngress).toBeUndefined();
    const ingress = rulesOfGroup('AWS::EC2::SecurityGroupIngress', taskGroup);
    expect(ingress.map((r) => [r.FromPort, r.ToPort, r.SourceSecurityGroupId])).toEqual([
      [8080, 8080, groupIdOf(lbGroup)],
      [8081, 8081, groupIdOf(lbGroup)],
    ]);
  });
});

describe('the load balancer and the VPC origin', () => {
  it('an internal ALB in the Door subnets takes TCP 80 from the VPC only, idles longer than the 60 s budget', () => {
    const { resources } = synthesized;
    const lb = loadBalancer();
    expect(lb).toMatchObject({ Scheme: 'internal', Type: 'application', Subnets: doorSubnets() });
    const idle = lb.LoadBalancerAttributes.find((a: { Key: string }) => a.Key === 'idle_timeout.timeout_seconds');
    expect(Number(idle.Value)).toBeGreaterThan(60);
    const lbGroup = lb.SecurityGroups[0]['Fn::GetAtt'][0] as string;
    expect(resources[lbGroup]!.Properties.SecurityGroupIngress).toEqual([
      expect.objectContaining({ CidrIp: '10.40.0.0/16', IpProtocol: 'tcp', FromPort: 80, ToPort: 80 }),
    ]);
    expect(rulesOfGroup('AWS::EC2::SecurityGroupIngress', lbGroup)).toEqual([]);
    // Out only to the tasks' door and health ports.
    expect(JSON.stringify(resources[lbGroup]!.Properties.SecurityGroupEgress ?? [])).not.toContain('0.0.0.0/0');
    expect(rulesOfGroup('AWS::EC2::SecurityGroupEgress', lbGroup).map((r) => [r.FromPort, r.ToPort])).toEqual([
      [8080, 8080],
      [8081, 8081],
    ]);
  });

  it('its HTTP listener on 80 forwards to an IP target group on 8080, health-checked on 8081 at /health', () => {
    const { idOf, runtime } = synthesized;
    const [[, listener]] = resourcesOf('AWS::ElasticLoadBalancingV2::Listener').filter(
      ([, r]) => JSON.stringify(r.Properties.LoadBalancerArn) === JSON.stringify(ref(runtime.doorLoadBalancer)),
    ) as unknown as [[string, { Properties: Record<string, any> }]];
    expect(listener.Properties).toMatchObject({ Port: 80, Protocol: 'HTTP' });
    const [action] = listener.Properties.DefaultActions;
    expect(action.Type).toBe('forward');
    const group = synthesized.resources[action.TargetGroupArn.Ref]!.Properties;
    expect(group).toMatchObject({
      TargetType: 'ip',
      Port: 8080,
      Protocol: 'HTTP',
      HealthCheckPort: '8081',
      HealthCheckPath: '/health',
      Matcher: { HttpCode: '200' },
      VpcId: ref(runtime.vpc),
    });
    expect(synthesized.resources[idOf(runtime.doorService)]!.Properties.LoadBalancers[0].TargetGroupArn).toEqual(action.TargetGroupArn);
  });

  it('CloudFront reaches it through a VPC origin (HTTP 80, 60 s) with the id door-large-bodies; the default behavior stays the router', () => {
    const { resources, runtime, idOf } = synthesized;
    const [[vpcOriginId, vpcOrigin]] = resourcesOf('AWS::CloudFront::VpcOrigin') as unknown as [
      [string, { Properties: Record<string, any> }],
    ];
    expect(vpcOrigin.Properties.VpcOriginEndpointConfig).toMatchObject({
      Arn: ref(runtime.doorLoadBalancer),
      HTTPPort: 80,
      OriginProtocolPolicy: 'http-only',
    });
    const config = resources[idOf(runtime.distribution)]!.Properties.DistributionConfig;
    expect(config.Origins).toHaveLength(2);
    const door = config.Origins.find((o: { Id: string }) => o.Id === 'door-large-bodies');
    expect(door).toEqual({
      Id: 'door-large-bodies',
      DomainName: { 'Fn::GetAtt': [idOf(runtime.doorLoadBalancer), 'DNSName'] },
      VpcOriginConfig: { VpcOriginId: { 'Fn::GetAtt': [vpcOriginId, 'Id'] }, OriginReadTimeout: 60 },
    });
    const router = config.Origins.find((o: { Id: string }) => o.Id !== 'door-large-bodies');
    expect(JSON.stringify(router.DomainName)).toContain(idOf(runtime.routerUrl as never));
    expect(config.DefaultCacheBehavior.TargetOriginId).toBe(router.Id);
    // Only the viewer function sends a request to the door: no behavior claims a path for it.
    expect(config.CacheBehaviors).toBeUndefined();
  });
});

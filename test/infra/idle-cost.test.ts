import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../infra/bundling.ts';
import { idleMonth, statedIdleTotal, type IdleMonth } from '../../infra/idle-cost.ts';
import { ensureSynthesized } from '../../local-cloud/template/assembly.ts';

/**
 * The idle month of the template `cdk deploy` ships (the shared cloud assembly, default settings), from the price
 * table of infra/idle-cost.ts, against what docs/deploy.md says it costs.
 */
let idle: IdleMonth;
const doc = fs.readFileSync(path.join(repoRoot, 'docs/deploy.md'), 'utf8');
const dollars = (value: number) => `$${value.toFixed(2)}`;

beforeAll(async () => {
  const assembly = await ensureSynthesized();
  const read = (file: string) => JSON.parse(fs.readFileSync(path.join(assembly, file), 'utf8'));
  // The operations nested stack (alarms, topic, dashboard) is priced from its own template.
  idle = idleMonth(read('Slipway.template.json'), (resource) => {
    const file = resource.Metadata?.['aws:asset:path'];
    return typeof file === 'string' ? read(file) : undefined;
  });
}, 600_000);

describe('the idle month of the default stack', () => {
  it('prices every resource: each type has a row (a price idle, paid per use, free, or operability apart)', () => {
    expect(idle.unpriced).toEqual([]);
    // The alarms of the operations nested stack were read, and listed apart.
    expect(idle.apart.filter((r) => r.type === 'AWS::CloudWatch::Alarm').length).toBeGreaterThan(40);
  });

  it('is at most $25: one NAT instance, the door on one instance, five secrets, one blank Spot task of the warm pool', () => {
    expect(idle.total).toBeLessThanOrEqual(25);
    const byType = (type: string) => idle.rows.filter((row) => row.type === type).map((row) => row.what);
    expect(byType('AWS::EC2::Instance').sort()).toEqual(['t3a.micro, 730 h', 't4g.nano, 730 h']);
    expect(byType('AWS::EC2::Volume').sort()).toEqual(['30 GB gp3', '8 GB gp3']);
    // The NAT instance's address; the door instance has none.
    expect(byType('PublicIPv4')).toEqual(['public IPv4 address, 730 h']);
    expect(byType('AWS::SecretsManager::Secret')).toHaveLength(5);
    for (const type of ['AWS::EC2::NatGateway', 'AWS::EC2::EIP', 'AWS::ElasticLoadBalancingV2::LoadBalancer', 'AWS::ECS::Service'])
      expect(byType(type)).toEqual([]);
    // The warm pool (functionsWarmTasks, default 1): its task and its once-a-second look-ups, read from the workers.
    expect(byType('WarmPool')).toEqual(['1 blank Fargate Spot task(s), X86_64, 0.25 vCPU / 0.5 GB, 730 h']);
    expect(idle.rows.filter((row) => row.type.startsWith('WarmPool')).map((row) => dollars(row.monthly))).toEqual(['$4.51', '$1.05']);
    expect(dollars(idle.total)).toBe('$24.17');
  });

  it("docs/deploy.md lists each resource's monthly figure and states an idle total within 25 % of the template's", () => {
    for (const row of idle.rows) expect(doc).toContain(dollars(row.monthly));
    const stated = statedIdleTotal(doc);
    expect(stated).not.toBeNull();
    expect(Math.abs(stated! - idle.total) / idle.total).toBeLessThanOrEqual(0.25);
  });
});

describe('the price table', () => {
  const vpc = { Subnet: { Type: 'AWS::EC2::Subnet', Properties: { MapPublicIpOnLaunch: true } } };

  it("the heavier shape: NAT gateway and its address, the load balancer, 2 x86 Fargate tasks of 0.5 vCPU / 1 GB: the issue's $90", () => {
    const month = idleMonth({
      Resources: {
        ...vpc,
        Nat: { Type: 'AWS::EC2::NatGateway', Properties: {} },
        NatAddress: { Type: 'AWS::EC2::EIP', Properties: {} },
        Alb: { Type: 'AWS::ElasticLoadBalancingV2::LoadBalancer', Properties: { Type: 'application' } },
        Task: {
          Type: 'AWS::ECS::TaskDefinition',
          Properties: { Cpu: '512', Memory: '1024', RuntimePlatform: { CpuArchitecture: 'X86_64' } },
        },
        Door: { Type: 'AWS::ECS::Service', Properties: { LaunchType: 'FARGATE', DesiredCount: 2, TaskDefinition: { Ref: 'Task' } } },
        ...Object.fromEntries(['A', 'B', 'C'].map((id) => [id, { Type: 'AWS::SecretsManager::Secret', Properties: {} }])),
      },
    });
    expect(month.unpriced).toEqual([]);
    expect(month.rows.map((row) => [row.logicalId, dollars(row.monthly)])).toEqual([
      ['Nat', '$32.85'],
      ['NatAddress', '$3.65'],
      ['Alb', '$16.43'],
      ['Door', '$36.04'],
      ['A', '$0.40'],
      ['B', '$0.40'],
      ['C', '$0.40'],
    ]);
    expect(dollars(month.total)).toBe('$90.17');
  });

  it('a warm pool read from the workers: two naming one task definition count it once, at the larger size', () => {
    const worker = (count: string) => ({
      Type: 'AWS::Lambda::Function',
      Properties: { Environment: { Variables: { FUNCTIONS_WARM_TASKS: count, FUNCTIONS_TASK_DEFINITION_ARN: { Ref: 'Task' } } } },
    });
    const month = idleMonth({
      Resources: {
        Task: {
          Type: 'AWS::ECS::TaskDefinition',
          Properties: { Cpu: '256', Memory: '512', RuntimePlatform: { CpuArchitecture: 'X86_64' } },
        },
        Invocations: worker('2'),
        Keeper: worker('1'),
        Unpooled: worker('0'),
      },
    });
    expect(month.unpriced).toEqual([]);
    expect(month.rows.map((row) => [row.type, row.what, dollars(row.monthly)])).toEqual([
      ['WarmPool', '2 blank Fargate Spot task(s), X86_64, 0.25 vCPU / 0.5 GB, 730 h', '$9.01'],
      ['WarmPoolRequests', '2 blank task(s) asking S3 for an assignment 1 a second', '$2.10'],
    ]);
  });

  it('an instance: its hours, its volumes, and an address when its subnet gives one; an EC2 service adds nothing', () => {
    const month = idleMonth({
      Resources: {
        ...vpc,
        Nat: {
          Type: 'AWS::EC2::Instance',
          Properties: {
            InstanceType: 't4g.nano',
            SubnetId: { Ref: 'Subnet' },
            BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 8, VolumeType: 'gp3' } }],
          },
        },
        OnEc2: { Type: 'AWS::ECS::Service', Properties: { LaunchType: 'EC2', DesiredCount: 1 } },
      },
    });
    expect(month.rows.map((row) => [row.type, dollars(row.monthly)])).toEqual([
      ['AWS::EC2::Instance', '$3.07'],
      ['AWS::EC2::Volume', '$0.64'],
      ['PublicIPv4', '$3.65'],
    ]);
  });

  it('reports what it cannot price: a type without a row, an unknown instance type, a volume of the image, provisioned capacity', () => {
    const month = idleMonth({
      Resources: {
        Db: { Type: 'AWS::RDS::DBInstance', Properties: {} },
        Big: { Type: 'AWS::EC2::Instance', Properties: { InstanceType: 'm7i.48xlarge' } },
        Table: { Type: 'AWS::DynamoDB::Table', Properties: { BillingMode: 'PROVISIONED' } },
        Alarm: { Type: 'AWS::CloudWatch::Alarm', Properties: {} },
        Board: { Type: 'AWS::CloudWatch::Dashboard', Properties: {} },
      },
    });
    expect(month.unpriced).toEqual([
      { logicalId: 'Db', type: 'AWS::RDS::DBInstance', why: 'no row in infra/idle-cost.ts' },
      { logicalId: 'Big', type: 'AWS::EC2::Instance', why: 'no price for instance type m7i.48xlarge' },
      { logicalId: 'Big', type: 'AWS::EC2::Instance', why: "its root volume's size is the image's: give it a block device mapping" },
      { logicalId: 'Table', type: 'AWS::DynamoDB::Table', why: 'provisioned capacity is paid while idle' },
    ]);
    // Operability is listed apart and counts nothing.
    expect(month.apart).toEqual([
      { logicalId: 'Alarm', type: 'AWS::CloudWatch::Alarm' },
      { logicalId: 'Board', type: 'AWS::CloudWatch::Dashboard' },
    ]);
    expect(month.total).toBe(0);
  });

  it('reads the stated total from the sentence that says "idle total"', () => {
    expect(statedIdleTotal('Storage is $0.0042 an hour. In all, the idle total is about **$17.09 a month**. Per use, $3.')).toBe(17.09);
    expect(statedIdleTotal('An idle month costs nothing. The total is $5.')).toBeNull();
    expect(statedIdleTotal('The idle total is not known. It costs $5.')).toBeNull();
  });
});

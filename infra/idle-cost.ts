/**
 * What a synthesized template costs in a month while nobody uses it (docs/deploy.md, "What it costs"): us-east-1
 * on-demand list prices, a 730-hour month. Every resource type of the template has a row: a price while idle, or
 * the reason it costs nothing idle (paid per use, or free). A type with no row is reported, so a new fixed cost
 * cannot slip in unpriced (test/infra/idle-cost.test.ts).
 */

export const HOURS_PER_MONTH = 730;

/** List prices, us-east-1, on demand. */
export const prices = {
  natGatewayHour: 0.045,
  publicIpv4Hour: 0.005,
  /** EC2 instance-hours, Linux. */
  instanceHour: { 't4g.nano': 0.0042, 't4g.micro': 0.0084, 't4g.small': 0.0168, 't3a.micro': 0.0094, 't3a.small': 0.0188 } as Record<
    string,
    number
  >,
  /** EBS per GB-month. */
  volumeGbMonth: { gp3: 0.08, gp2: 0.1 } as Record<string, number>,
  fargate: {
    X86_64: { vcpuHour: 0.04048, gbHour: 0.004445 },
    ARM64: { vcpuHour: 0.03238, gbHour: 0.00356 },
  } as Record<string, { vcpuHour: number; gbHour: number }>,
  /**
   * Fargate Spot, X86_64 (Spot has no ARM64 price in every region, and the runner's image is linux/amd64). Spot
   * prices move with supply and are published only as a current figure; AWS advertises up to 70 % off on-demand.
   * Priced here at half the on-demand rate, the cautious end of that range, so that the idle month is an upper bound.
   */
  fargateSpot: { X86_64: { vcpuHour: 0.04048 / 2, gbHour: 0.004445 / 2 } } as Record<string, { vcpuHour: number; gbHour: number }>,
  /** S3 GET and HEAD requests (Standard), per request: the warm pool's blank tasks ask for their assignment. */
  s3GetRequest: 0.0004 / 1000,
  loadBalancerHour: 0.0225,
  secretMonth: 0.4,
  kmsKeyMonth: 1,
} as const;

/** Types paid per use (requests, GB, GB-seconds, messages, log ingestion): nothing while idle. */
export const usagePriced = [
  'AWS::ApiGatewayV2::Api',
  'AWS::CloudFront::Distribution',
  'AWS::CloudFront::Function',
  'AWS::CloudFront::VpcOrigin',
  'AWS::CodeBuild::Project',
  'AWS::DynamoDB::Table',
  'AWS::EC2::FlowLog',
  'AWS::ECS::Cluster',
  'AWS::Lambda::EventSourceMapping',
  'AWS::Lambda::Function',
  'AWS::Lambda::LayerVersion',
  'AWS::Lambda::Url',
  'AWS::Logs::LogGroup',
  'AWS::Logs::MetricFilter',
  'AWS::Logs::SubscriptionFilter',
  'AWS::S3::Bucket',
  'AWS::Scheduler::Schedule',
  'AWS::Scheduler::ScheduleGroup',
  'AWS::SQS::Queue',
  'Custom::CDKBucketDeployment',
] as const;

/** Types that cost nothing at all (configuration, permissions, the VPC's own parts). */
export const free = [
  'AWS::ApiGatewayV2::Integration',
  'AWS::ApiGatewayV2::Route',
  'AWS::ApiGatewayV2::Stage',
  'AWS::CDK::Metadata',
  'AWS::CloudFront::CachePolicy',
  'AWS::CloudFront::OriginAccessControl',
  'AWS::CloudFront::OriginRequestPolicy',
  'AWS::CloudFront::ResponseHeadersPolicy',
  'AWS::EC2::InternetGateway',
  'AWS::EC2::LaunchTemplate',
  'AWS::EC2::NetworkAcl',
  'AWS::EC2::NetworkAclEntry',
  'AWS::EC2::Route',
  'AWS::EC2::RouteTable',
  'AWS::EC2::SecurityGroup',
  'AWS::EC2::SecurityGroupEgress',
  'AWS::EC2::SecurityGroupIngress',
  'AWS::EC2::Subnet',
  'AWS::EC2::SubnetNetworkAclAssociation',
  'AWS::EC2::SubnetRouteTableAssociation',
  'AWS::EC2::VPC',
  'AWS::EC2::VPCGatewayAttachment',
  'AWS::ECS::ClusterCapacityProviderAssociations',
  'AWS::ECS::TaskDefinition',
  'AWS::ElasticLoadBalancingV2::Listener',
  'AWS::ElasticLoadBalancingV2::TargetGroup',
  'AWS::IAM::InstanceProfile',
  'AWS::IAM::ManagedPolicy',
  'AWS::IAM::Policy',
  'AWS::IAM::Role',
  'AWS::Lambda::Permission',
  'AWS::S3::BucketPolicy',
  'AWS::SNS::Subscription',
  'AWS::SNS::TopicPolicy',
  'AWS::SQS::QueuePolicy',
] as const;

/**
 * Operability (alarms, dashboards, their topic, saved queries): listed apart, not counted in the idle month. About
 * $0.10 a month per alarm metric, $3 per dashboard past the account's first three; a topic and a query definition
 * cost nothing until used.
 */
export const operability = [
  'AWS::CloudWatch::Alarm',
  'AWS::CloudWatch::CompositeAlarm',
  'AWS::CloudWatch::Dashboard',
  'AWS::Logs::QueryDefinition',
  'AWS::SNS::Topic',
] as const;

type Resource = { Type: string; Properties?: Record<string, any>; Metadata?: Record<string, any> };
type Template = { Resources: Record<string, Resource> };

export interface IdleRow {
  logicalId: string;
  type: string;
  /** What the figure is made of, in words. */
  what: string;
  monthly: number;
}

export interface IdleMonth {
  rows: IdleRow[];
  /** Sum of the rows, in dollars. */
  total: number;
  /** Operability resources, listed apart (logical id and type). */
  apart: { logicalId: string; type: string }[];
  /** Resources whose cost this table cannot tell: a type without a row, or a fixed-cost resource it cannot price. */
  unpriced: { logicalId: string; type: string; why: string }[];
}

const month = (hourly: number) => hourly * HOURS_PER_MONTH;
const refOf = (value: unknown): string | undefined => (value as { Ref?: string } | undefined)?.Ref;

/** An instance's hours, its EBS volumes, and its public IPv4 address (asked for, or given by its subnet). */
function instanceRows(logicalId: string, props: Record<string, any>, resources: Record<string, Resource>, unpriced: IdleMonth['unpriced']) {
  const rows: IdleRow[] = [];
  const type = String(props.InstanceType ?? '');
  const hourly = prices.instanceHour[type];
  if (hourly === undefined) unpriced.push({ logicalId, type: 'AWS::EC2::Instance', why: `no price for instance type ${type || '(none)'}` });
  else rows.push({ logicalId, type: 'AWS::EC2::Instance', what: `${type}, ${HOURS_PER_MONTH} h`, monthly: month(hourly) });
  const mappings = (props.BlockDeviceMappings ?? []) as { Ebs?: { VolumeSize?: number; VolumeType?: string } }[];
  if (!mappings.some((m) => m.Ebs))
    unpriced.push({ logicalId, type: 'AWS::EC2::Instance', why: "its root volume's size is the image's: give it a block device mapping" });
  for (const { Ebs: ebs } of mappings) {
    if (!ebs) continue;
    const perGb = prices.volumeGbMonth[ebs.VolumeType ?? 'gp2'];
    if (perGb === undefined || !ebs.VolumeSize)
      unpriced.push({ logicalId, type: 'AWS::EC2::Instance', why: 'a volume without a priced type and size' });
    else
      rows.push({
        logicalId,
        type: 'AWS::EC2::Volume',
        what: `${ebs.VolumeSize} GB ${ebs.VolumeType ?? 'gp2'}`,
        monthly: ebs.VolumeSize * perGb,
      });
  }
  const nic = (props.NetworkInterfaces ?? [])[0] as { AssociatePublicIpAddress?: boolean; SubnetId?: unknown } | undefined;
  const subnetId = refOf(nic?.SubnetId ?? props.SubnetId);
  const fromSubnet = subnetId ? resources[subnetId]?.Properties?.MapPublicIpOnLaunch === true : false;
  if (nic?.AssociatePublicIpAddress ?? fromSubnet)
    rows.push({ logicalId, type: 'PublicIPv4', what: `public IPv4 address, ${HOURS_PER_MONTH} h`, monthly: month(prices.publicIpv4Hour) });
  return rows;
}

/** A Fargate service's tasks (desired count, the task definition's CPU, memory and architecture); an EC2 one runs on its instance's row. */
function serviceRows(logicalId: string, props: Record<string, any>, resources: Record<string, Resource>, unpriced: IdleMonth['unpriced']) {
  if (props.LaunchType === 'EC2') return [];
  const definition = resources[refOf(props.TaskDefinition) ?? '']?.Properties;
  const architecture = definition?.RuntimePlatform?.CpuArchitecture ?? 'X86_64';
  const rate = prices.fargate[architecture];
  if (props.LaunchType !== 'FARGATE' || !definition || !rate) {
    unpriced.push({ logicalId, type: 'AWS::ECS::Service', why: 'not a Fargate service of a task definition in the template' });
    return [];
  }
  const count = Number(props.DesiredCount ?? 1);
  const vcpu = Number(definition.Cpu) / 1024;
  const gb = Number(definition.Memory) / 1024;
  return [
    {
      logicalId,
      type: 'AWS::ECS::Service',
      what: `${count} Fargate task(s), ${architecture}, ${vcpu} vCPU / ${gb} GB, ${HOURS_PER_MONTH} h`,
      monthly: count * month(vcpu * rate.vcpuHour + gb * rate.gbHour),
    },
  ];
}

/** How often a warm pool's blank task asks for its assignment (lib/functions/hosts/cloud/warm-tasks.ts ASSIGNMENT_POLL_MS). */
export const WARM_TASK_ASKS_PER_SECOND = 1;

/**
 * The warm pool of queued invocations (docs/functions.md, "The warm pool"): no resource of the template runs it, the
 * workers start its tasks, so it is read from the workers' environment: FUNCTIONS_WARM_TASKS blank Fargate Spot
 * tasks of the task definition FUNCTIONS_TASK_DEFINITION_ARN names, running all month, each asking S3 for its
 * assignment once a second. Several workers naming one pool count it once.
 */
function warmPoolRows(resources: Record<string, Resource>, unpriced: IdleMonth['unpriced']): IdleRow[] {
  const pools = new Map<string, number>();
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const variables = resource.Properties?.Environment?.Variables ?? {};
    const count = Number(variables.FUNCTIONS_WARM_TASKS ?? 0);
    const definition = refOf(variables.FUNCTIONS_TASK_DEFINITION_ARN);
    if (count > 0 && definition) pools.set(definition, Math.max(count, pools.get(definition) ?? 0));
  }
  const rows: IdleRow[] = [];
  for (const [logicalId, count] of pools) {
    const definition = resources[logicalId]?.Properties;
    const architecture = definition?.RuntimePlatform?.CpuArchitecture ?? 'X86_64';
    const rate = prices.fargateSpot[architecture];
    if (!definition || !rate) {
      unpriced.push({ logicalId, type: 'WarmPool', why: `no Fargate Spot price for its task definition (${architecture})` });
      continue;
    }
    const vcpu = Number(definition.Cpu) / 1024;
    const gb = Number(definition.Memory) / 1024;
    rows.push({
      logicalId,
      type: 'WarmPool',
      what: `${count} blank Fargate Spot task(s), ${architecture}, ${vcpu} vCPU / ${gb} GB, ${HOURS_PER_MONTH} h`,
      monthly: count * month(vcpu * rate.vcpuHour + gb * rate.gbHour),
    });
    rows.push({
      logicalId,
      type: 'WarmPoolRequests',
      what: `${count} blank task(s) asking S3 for an assignment ${WARM_TASK_ASKS_PER_SECOND} a second`,
      monthly: count * WARM_TASK_ASKS_PER_SECOND * 3600 * HOURS_PER_MONTH * prices.s3GetRequest,
    });
  }
  return rows;
}

/**
 * The idle month of a template. A nested stack costs what its own resources cost: `nestedTemplate` reads its
 * template (from the cloud assembly, by the resource's `aws:asset:path`), and its rows join the parent's.
 */
export function idleMonth(template: Template, nestedTemplate?: (resource: Resource) => Template | undefined): IdleMonth {
  const resources = template.Resources;
  const rows: IdleRow[] = [];
  const apart: IdleMonth['apart'] = [];
  const unpriced: IdleMonth['unpriced'] = [];
  const fixed = (logicalId: string, type: string, what: string, monthly: number) => rows.push({ logicalId, type, what, monthly });
  for (const [logicalId, resource] of Object.entries(resources)) {
    const { Type: type, Properties: props = {} } = resource;
    const nested = type === 'AWS::CloudFormation::Stack' ? nestedTemplate?.(resource) : undefined;
    if (type === 'AWS::CloudFormation::Stack' && !nested) unpriced.push({ logicalId, type, why: 'its nested template was not read' });
    else if (nested) {
      const inner = idleMonth(nested, nestedTemplate);
      rows.push(...inner.rows);
      apart.push(...inner.apart);
      unpriced.push(...inner.unpriced);
    } else if ((operability as readonly string[]).includes(type)) apart.push({ logicalId, type });
    else if (type === 'AWS::EC2::NatGateway') fixed(logicalId, type, `NAT gateway, ${HOURS_PER_MONTH} h`, month(prices.natGatewayHour));
    else if (type === 'AWS::EC2::EIP') fixed(logicalId, type, `public IPv4 address, ${HOURS_PER_MONTH} h`, month(prices.publicIpv4Hour));
    else if (type === 'AWS::EC2::Instance') rows.push(...instanceRows(logicalId, props, resources, unpriced));
    else if (type === 'AWS::ECS::Service') rows.push(...serviceRows(logicalId, props, resources, unpriced));
    else if (type === 'AWS::ElasticLoadBalancingV2::LoadBalancer')
      fixed(logicalId, type, `${props.Type ?? 'application'} load balancer, ${HOURS_PER_MONTH} h`, month(prices.loadBalancerHour));
    else if (type === 'AWS::SecretsManager::Secret') fixed(logicalId, type, 'secret', prices.secretMonth);
    else if (type === 'AWS::KMS::Key') fixed(logicalId, type, 'customer managed key', prices.kmsKeyMonth);
    else if (type === 'AWS::DynamoDB::Table' && props.BillingMode !== 'PAY_PER_REQUEST')
      unpriced.push({ logicalId, type, why: 'provisioned capacity is paid while idle' });
    else if (!(usagePriced as readonly string[]).includes(type) && !(free as readonly string[]).includes(type))
      unpriced.push({ logicalId, type, why: 'no row in infra/idle-cost.ts' });
  }
  rows.push(...warmPoolRows(resources, unpriced));
  return { rows, total: rows.reduce((sum, row) => sum + row.monthly, 0), apart, unpriced };
}

/** The idle total docs/deploy.md states: the first dollar figure after "idle total" in the same sentence. */
export function statedIdleTotal(markdown: string): number | null {
  const figure = /\bidle total\b[^.$]*\$(\d+(?:\.\d+)?)/i.exec(markdown);
  return figure ? Number(figure[1]) : null;
}

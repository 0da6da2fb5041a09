import { createHash } from 'node:crypto';
import type { SynthesizedTemplate } from './template.ts';

/** What `Ref` and `Fn::GetAtt` of one resource give on this platform. */
export interface PhysicalResource {
  ref: string;
  attributes: Record<string, string>;
}

/** Account, region and what each resource is locally: the values the template's intrinsics resolve to. */
export interface LocalStackValues {
  accountId: string;
  region: string;
  stackName: string;
  physical: Map<string, PhysicalResource>;
  /** Context values the template reads through `Fn::ImportValue` (none today; an unknown one is an error). */
  imports?: Record<string, string>;
}

export class UnresolvableIntrinsicError extends Error {}

const shortHash = (text: string, length = 17) => createHash('sha256').update(text).digest('hex').slice(0, length);

/**
 * What a resource the local platform does not create (a VPC's subnets, the
 * ECS cluster, the runner layer ...) stands for: identifiers of the shape AWS
 * gives, derived from the logical id, so every intrinsic naming it resolves to
 * a stable value. A type missing here cannot be referenced: its intrinsic is
 * an error, never an empty string.
 */
export function placeholderResource(type: string, logicalId: string, values: Omit<LocalStackValues, 'physical'>): PhysicalResource | null {
  const { accountId, region, stackName } = values;
  const arn = (service: string, resource: string, regional = true) =>
    `arn:aws:${service}:${regional ? region : ''}:${accountId}:${resource}`;
  const id = shortHash(logicalId);
  switch (type) {
    case 'AWS::IAM::Role': {
      const name = `${stackName}-${logicalId}`.slice(0, 64);
      return { ref: name, attributes: { Arn: arn('iam', `role/${name}`, false), RoleId: `AROA${id.toUpperCase()}` } };
    }
    case 'AWS::IAM::ManagedPolicy': {
      const ref = arn('iam', `policy/${stackName}-${logicalId}`, false);
      return { ref, attributes: { PolicyArn: ref } };
    }
    case 'AWS::Logs::LogGroup': {
      const name = `/aws/lambda/${stackName}-${logicalId}`;
      return { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
    }
    case 'AWS::EC2::VPC':
      return { ref: `vpc-${id}`, attributes: { CidrBlock: '10.40.0.0/16', DefaultSecurityGroup: `sg-${shortHash(`${logicalId}/sg`)}` } };
    case 'AWS::EC2::Subnet':
      return { ref: `subnet-${id}`, attributes: { SubnetId: `subnet-${id}` } };
    case 'AWS::EC2::SecurityGroup':
      return { ref: `sg-${id}`, attributes: { GroupId: `sg-${id}` } };
    case 'AWS::EC2::Instance': {
      const ip = `10.40.${parseInt(id.slice(0, 2), 16)}.${parseInt(id.slice(2, 4), 16) || 1}`;
      const dnsName = `ip-${ip.replaceAll('.', '-')}.ec2.internal`;
      return {
        ref: `i-${id}`,
        attributes: { InstanceId: `i-${id}`, PrivateIp: ip, PrivateDnsName: dnsName, AvailabilityZone: `${region}a` },
      };
    }
    case 'AWS::IAM::InstanceProfile': {
      const name = `${stackName}-${logicalId}`.slice(0, 128);
      return { ref: name, attributes: { Arn: arn('iam', `instance-profile/${name}`, false) } };
    }
    case 'AWS::ECS::Cluster': {
      const name = `${stackName}-${logicalId}`;
      return { ref: name, attributes: { Arn: arn('ecs', `cluster/${name}`) } };
    }
    case 'AWS::ECS::TaskDefinition': {
      const ref = arn('ecs', `task-definition/${stackName}${logicalId}:1`);
      return { ref, attributes: { TaskDefinitionArn: ref } };
    }
    case 'AWS::CodeBuild::Project': {
      const name = `${stackName}-${logicalId}`;
      return { ref: name, attributes: { Arn: arn('codebuild', `project/${name}`) } };
    }
    case 'AWS::Lambda::LayerVersion':
      return { ref: arn('lambda', `layer:${stackName}-${logicalId}:1`), attributes: {} };
    case 'AWS::ApiGatewayV2::Api':
      return { ref: id.slice(0, 10), attributes: { ApiEndpoint: `https://${id.slice(0, 10)}.execute-api.${region}.amazonaws.com` } };
    case 'AWS::ApiGatewayV2::Stage':
      return { ref: '$default', attributes: {} };
    case 'AWS::CloudFront::Distribution':
      return { ref: id.toUpperCase().slice(0, 14), attributes: { DomainName: `d${id.slice(0, 13)}.cloudfront.net` } };
    case 'AWS::Lambda::Url':
      return { ref: '', attributes: { FunctionUrl: `https://${id}.lambda-url.${region}.on.aws/` } };
    case 'AWS::CloudFront::VpcOrigin':
      return { ref: `vo_${id}`, attributes: { Id: `vo_${id}`, Arn: arn('cloudfront', `vpcorigin/vo_${id}`, false) } };
    case 'AWS::ECS::Service': {
      const name = `${stackName}-${logicalId}`;
      const ref = arn('ecs', `service/${stackName}/${name}`);
      return { ref, attributes: { Name: name, ServiceArn: ref } };
    }
    default:
      return loadBalancingPlaceholder(type, logicalId, values);
  }
}

/** An application load balancer, its listeners and target groups: the ARNs and the internal DNS name ELB gives. */
function loadBalancingPlaceholder(type: string, logicalId: string, values: Omit<LocalStackValues, 'physical'>): PhysicalResource | null {
  const id = shortHash(logicalId, 16);
  const name = logicalId.replace(/[^A-Za-z0-9]/g, '').slice(0, 32);
  const arn = (resource: string) => `arn:aws:elasticloadbalancing:${values.region}:${values.accountId}:${resource}`;
  switch (type) {
    case 'AWS::ElasticLoadBalancingV2::LoadBalancer': {
      const ref = arn(`loadbalancer/app/${name}/${id}`);
      const dnsName = `internal-${name}-${parseInt(id.slice(0, 8), 16)}.${values.region}.elb.amazonaws.com`.toLowerCase();
      return {
        ref,
        attributes: { LoadBalancerArn: ref, DNSName: dnsName, LoadBalancerName: name, LoadBalancerFullName: `app/${name}/${id}` },
      };
    }
    case 'AWS::ElasticLoadBalancingV2::TargetGroup': {
      const ref = arn(`targetgroup/${name}/${id}`);
      return { ref, attributes: { TargetGroupArn: ref, TargetGroupName: name, TargetGroupFullName: `targetgroup/${name}/${id}` } };
    }
    case 'AWS::ElasticLoadBalancingV2::Listener': {
      const ref = arn(`listener/app/${name}/${id}/${shortHash(`${logicalId}/listener`, 16)}`);
      return { ref, attributes: { ListenerArn: ref } };
    }
    default:
      return null;
  }
}

function pseudo(name: string, values: LocalStackValues): string {
  switch (name) {
    case 'AWS::Region':
      return values.region;
    case 'AWS::AccountId':
      return values.accountId;
    case 'AWS::Partition':
      return 'aws';
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    case 'AWS::StackName':
      return values.stackName;
    default:
      throw new UnresolvableIntrinsicError(`Ref ${name}: no local value`);
  }
}

function physicalOf(logicalId: string, values: LocalStackValues): PhysicalResource {
  const resource = values.physical.get(logicalId);
  if (!resource) throw new UnresolvableIntrinsicError(`${logicalId}: the local platform has no value for this resource`);
  return resource;
}

function getAtt(logicalId: string, attribute: string, values: LocalStackValues): string {
  const value = physicalOf(logicalId, values).attributes[attribute];
  if (value === undefined) throw new UnresolvableIntrinsicError(`Fn::GetAtt ${logicalId}.${attribute}: no local value`);
  return value;
}

function sub(text: string, variables: Record<string, unknown>, values: LocalStackValues): string {
  return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
    if (name in variables) return resolveString(variables[name], values);
    if (name.startsWith('AWS::')) return pseudo(name, values);
    const dot = name.indexOf('.');
    return dot > 0 ? getAtt(name.slice(0, dot), name.slice(dot + 1), values) : physicalOf(name, values).ref;
  });
}

/**
 * Resolves the intrinsic functions CDK writes (Ref, Fn::GetAtt, Fn::Join,
 * Fn::Sub, Fn::Select, Fn::Split, Fn::ImportValue) against the local values;
 * anything it cannot resolve throws, so a variable never silently becomes ''.
 */
export function resolveValue(value: unknown, values: LocalStackValues): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveValue(item, values));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1) {
    const [key, arg] = entries[0]!;
    switch (key) {
      case 'Ref':
        return String(arg).startsWith('AWS::') ? pseudo(String(arg), values) : physicalOf(String(arg), values).ref;
      case 'Fn::GetAtt': {
        const [logicalId, attribute] = Array.isArray(arg) ? arg.map(String) : String(arg).split(/\.(.*)/);
        return getAtt(logicalId!, attribute!, values);
      }
      case 'Fn::Join': {
        const [separator, parts] = arg as [string, unknown[]];
        return (resolveValue(parts, values) as unknown[]).map((part) => String(part)).join(separator);
      }
      case 'Fn::Sub':
        return Array.isArray(arg) ? sub(String(arg[0]), (arg[1] ?? {}) as Record<string, unknown>, values) : sub(String(arg), {}, values);
      case 'Fn::Select': {
        const [index, list] = arg as [unknown, unknown];
        const items = resolveValue(list, values) as unknown[];
        const item = items[Number(resolveValue(index, values))];
        if (item === undefined) throw new UnresolvableIntrinsicError(`Fn::Select ${JSON.stringify(index)} is out of range`);
        return item;
      }
      case 'Fn::Split': {
        const [separator, text] = arg as [string, unknown];
        return resolveString(text, values).split(separator);
      }
      case 'Fn::ImportValue': {
        const name = resolveString(arg, values);
        const imported = values.imports?.[name];
        if (imported === undefined) throw new UnresolvableIntrinsicError(`Fn::ImportValue ${name}: no local value`);
        return imported;
      }
      default:
        if (key.startsWith('Fn::') || key === 'Condition')
          throw new UnresolvableIntrinsicError(`${key} is not resolved by the local platform`);
    }
  }
  return Object.fromEntries(entries.map(([key, item]) => [key, resolveValue(item, values)]));
}

export function resolveString(value: unknown, values: LocalStackValues): string {
  const resolved = resolveValue(value, values);
  if (typeof resolved !== 'string' && typeof resolved !== 'number' && typeof resolved !== 'boolean') {
    throw new UnresolvableIntrinsicError(`${JSON.stringify(value)} does not resolve to a string`);
  }
  return String(resolved);
}

/** Placeholders for every resource of a type the platform does not create, beside what provisioning made. */
export function withPlaceholders(
  template: SynthesizedTemplate,
  values: Omit<LocalStackValues, 'physical'>,
  made: Map<string, PhysicalResource>,
): Map<string, PhysicalResource> {
  const physical = new Map(made);
  for (const [logicalId, resource] of Object.entries(template.resources)) {
    if (physical.has(logicalId)) continue;
    const placeholder = placeholderResource(resource.Type, logicalId, values);
    if (placeholder) physical.set(logicalId, placeholder);
  }
  return physical;
}

import { request } from 'node:http';
import type { ServiceTarget, TargetRegistry } from '../ecs/ecs-scheduler.ts';
import { resolveString, type LocalStackValues } from '../template/intrinsics.ts';
import { resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';

/**
 * The template's application load balancers, without a process of their own: a listener's default action names a
 * target group, the ECS services register their RUNNING tasks in it (ecs-scheduler.ts), and each target is
 * checked on the group's health check port and path. The local CloudFront (vpc-origin.ts) asks for a healthy
 * target of the listener behind its VPC origin and sends the request straight to it.
 */

interface TargetGroup {
  logicalId: string;
  healthPath: string;
  /** 'traffic-port', or the container port the check goes to. */
  healthPort: 'traffic-port' | number;
  intervalMs: number;
  timeoutMs: number;
  unhealthyThreshold: number;
  matcher: (status: number) => boolean;
}

interface LoadBalancer {
  dnsName: string;
  /** Listener port to the target group its default action forwards to. */
  listeners: Map<number, string>;
}

interface Target extends ServiceTarget {
  healthy: boolean;
  /** It passed a check once: from then on it is checked at the group's interval. */
  passedOnce: boolean;
  failures: number;
  timer?: NodeJS.Timeout;
}

/** Where the local CloudFront sends a request for a load balancer's listener. */
export type ListenerRoute =
  | { kind: 'target'; host: string; port: number; hostHeader: string }
  | { kind: 'no-listener' }
  | { kind: 'no-healthy-target' };

export interface LocalLoadBalancers extends TargetRegistry {
  route(loadBalancerLogicalId: string, listenerPort: number): ListenerRoute;
  stop(): void;
}

/** The first health checks come this often, so that a new target is used as soon as it answers. */
const FIRST_CHECK_MS = 200;

/** A Matcher's HttpCode: `200`, `200,204` or `200-299`. */
function httpCodeMatcher(codes: string): (status: number) => boolean {
  const ranges = codes.split(',').map((part) => part.split('-').map(Number) as [number, number?]);
  return (status) => ranges.some(([low, high]) => status >= low && status <= (high ?? low));
}

function targetGroupsOf(template: SynthesizedTemplate): Map<string, TargetGroup> {
  const groups = new Map<string, TargetGroup>();
  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::ElasticLoadBalancingV2::TargetGroup')) {
    const props = resource.Properties ?? {};
    const port = props.HealthCheckPort;
    groups.set(logicalId, {
      logicalId,
      healthPath: String(props.HealthCheckPath ?? '/'),
      healthPort: port === undefined || port === 'traffic-port' ? 'traffic-port' : Number(port),
      intervalMs: 1000 * Number(props.HealthCheckIntervalSeconds ?? 30),
      timeoutMs: 1000 * Number(props.HealthCheckTimeoutSeconds ?? 5),
      unhealthyThreshold: Number(props.UnhealthyThresholdCount ?? 2),
      matcher: httpCodeMatcher(String(props.Matcher?.HttpCode ?? '200')),
    });
  }
  return groups;
}

function loadBalancersOf(template: SynthesizedTemplate, values: LocalStackValues): Map<string, LoadBalancer> {
  const balancers = new Map<string, LoadBalancer>();
  for (const [logicalId] of resourcesOfType(template, 'AWS::ElasticLoadBalancingV2::LoadBalancer')) {
    const dnsName = values.physical.get(logicalId)?.attributes.DNSName;
    if (dnsName) balancers.set(logicalId, { dnsName, listeners: new Map() });
  }
  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::ElasticLoadBalancingV2::Listener')) {
    const props = resource.Properties ?? {};
    const forward = ((props.DefaultActions ?? []) as Record<string, any>[]).find((action) => action.Type === 'forward');
    const groupId = forward?.TargetGroupArn?.Ref ?? forward?.ForwardConfig?.TargetGroups?.[0]?.TargetGroupArn?.Ref;
    const balancer = balancers.get(props.LoadBalancerArn?.Ref);
    if (!balancer || !groupId) throw new Error(`Listener ${logicalId}: the local platform runs a listener that forwards to a target group`);
    balancer.listeners.set(Number(resolveString(props.Port, values)), groupId);
  }
  return balancers;
}

/** One health check: the group's path on its port, passed when the status matches within the timeout. */
function check(group: TargetGroup, target: Target): Promise<boolean> {
  const port = group.healthPort === 'traffic-port' ? target.port : target.portOf(group.healthPort);
  if (port === undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: group.healthPath, agent: false, timeout: group.timeoutMs }, (res) => {
      res.resume();
      resolve(group.matcher(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

export function createLoadBalancers(template: SynthesizedTemplate, values: LocalStackValues): LocalLoadBalancers {
  const groups = targetGroupsOf(template);
  const balancers = loadBalancersOf(template, values);
  const targets = new Map<string, Target[]>([...groups.keys()].map((id) => [id, []]));
  const next = new Map<string, number>();

  const watch = (group: TargetGroup, target: Target) => {
    const listed = () => targets.get(group.logicalId)!.includes(target);
    const run = async () => {
      const passed = await check(group, target);
      if (!listed()) return;
      target.failures = passed ? 0 : target.failures + 1;
      // Locally a new target is healthy at its first passing check (ALB waits for HealthyThresholdCount of them).
      if (passed) target.healthy = target.passedOnce = true;
      else if (target.failures >= group.unhealthyThreshold) target.healthy = false;
      target.timer = setTimeout(run, target.passedOnce ? group.intervalMs : FIRST_CHECK_MS);
      target.timer.unref();
    };
    void run();
  };

  return {
    register(groupId, serviceTarget) {
      const group = groups.get(groupId);
      if (!group) throw new Error(`Target group ${groupId} is not in the template`);
      const target: Target = { ...serviceTarget, healthy: false, passedOnce: false, failures: 0 };
      targets.get(groupId)!.push(target);
      watch(group, target);
    },
    deregister(groupId, taskArn) {
      const list = targets.get(groupId) ?? [];
      const index = list.findIndex((target) => target.taskArn === taskArn);
      if (index < 0) return;
      clearTimeout(list[index]!.timer);
      list.splice(index, 1);
    },
    isHealthy: (groupId, taskArn) => (targets.get(groupId) ?? []).some((target) => target.taskArn === taskArn && target.healthy),
    route(loadBalancerLogicalId, listenerPort) {
      const balancer = balancers.get(loadBalancerLogicalId);
      const groupId = balancer?.listeners.get(listenerPort);
      if (!balancer || !groupId) return { kind: 'no-listener' };
      const healthy = targets.get(groupId)!.filter((target) => target.healthy);
      if (!healthy.length) return { kind: 'no-healthy-target' };
      // Round robin over the healthy targets.
      const turn = (next.get(groupId) ?? 0) % healthy.length;
      next.set(groupId, turn + 1);
      return { kind: 'target', host: '127.0.0.1', port: healthy[turn]!.port, hostHeader: balancer.dnsName };
    },
    stop() {
      for (const list of targets.values()) for (const target of list.splice(0)) clearTimeout(target.timer);
    },
  };
}

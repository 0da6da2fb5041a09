import { connect } from 'node:net';
import { resolveString, type LocalStackValues } from '../template/intrinsics.ts';
import { resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';

/**
 * The template's EC2 instances that are ECS container instances: an AWS::EC2::Instance whose user data writes
 * `ECS_CLUSTER={name}` into the ECS agent's configuration joins that cluster, as the ECS-optimized image's agent
 * does. No machine is started: a task the service scheduler places on one (a service of launch type EC2) runs as
 * every local task does, and each of its static host ports (bridge mode, `HostPort`) becomes the instance's port,
 * which a CloudFront VPC origin of the instance reaches (vpc-origin.ts). Two tasks cannot hold one host port of
 * one instance: ECS does not place the second.
 */

export interface ContainerInstance {
  logicalId: string;
  clusterName: string;
  /** Its private DNS name: the Host a VPC origin of the instance sends (the origin's DomainName). */
  dnsName: string;
}

/** Where the local CloudFront sends a request for an instance's port. */
export type InstanceRoute = { kind: 'port'; host: string; port: number; hostHeader: string } | { kind: 'closed' };

export interface ContainerInstances {
  /** The cluster's container instances, in template order. */
  ofCluster(clusterName: string): ContainerInstance[];
  /** Binds the task's host ports (host port to loopback port) on the instance; false when one is taken. */
  bind(instanceLogicalId: string, taskArn: string, hostPorts: Map<number, number>): boolean;
  release(taskArn: string): void;
  route(instanceLogicalId: string, port: number): InstanceRoute;
  /** The loopback ports bound for the task accept connections (its containers listen). */
  listening(taskArn: string): Promise<boolean>;
}

/** The cluster an instance's user data names (`ECS_CLUSTER=...`), or null. */
export function clusterOfUserData(userData: string): string | null {
  const found = /ECS_CLUSTER=([A-Za-z0-9_-]+)/.exec(userData);
  return found ? found[1]! : null;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

export function templateContainerInstances(template: SynthesizedTemplate, values: LocalStackValues): ContainerInstances {
  const instances: ContainerInstance[] = [];
  for (const [logicalId, resource] of resourcesOfType(template, 'AWS::EC2::Instance')) {
    const raw = resource.Properties?.UserData?.['Fn::Base64'];
    if (raw === undefined) continue;
    const clusterName = clusterOfUserData(resolveString(raw, values));
    if (clusterName) instances.push({ logicalId, clusterName, dnsName: values.physical.get(logicalId)?.attributes.PrivateDnsName ?? '' });
  }
  // Per instance: host port to the task holding it and the loopback port that stands for it.
  const bound = new Map<string, Map<number, { taskArn: string; port: number }>>(instances.map((i) => [i.logicalId, new Map()]));
  return {
    ofCluster: (clusterName) => instances.filter((instance) => instance.clusterName === clusterName),
    bind(instanceLogicalId, taskArn, hostPorts) {
      const ports = bound.get(instanceLogicalId);
      if (!ports || [...hostPorts.keys()].some((hostPort) => ports.has(hostPort))) return false;
      for (const [hostPort, port] of hostPorts) ports.set(hostPort, { taskArn, port });
      return true;
    },
    release(taskArn) {
      for (const ports of bound.values()) for (const [hostPort, entry] of ports) if (entry.taskArn === taskArn) ports.delete(hostPort);
    },
    route(instanceLogicalId, port) {
      const entry = bound.get(instanceLogicalId)?.get(port);
      const instance = instances.find((i) => i.logicalId === instanceLogicalId)!;
      return entry ? { kind: 'port', host: '127.0.0.1', port: entry.port, hostHeader: instance.dnsName } : { kind: 'closed' };
    },
    async listening(taskArn) {
      const ports = [...bound.values()].flatMap((map) => [...map.values()].filter((entry) => entry.taskArn === taskArn));
      return (await Promise.all(ports.map((entry) => accepts(entry.port)))).every(Boolean);
    },
  };
}

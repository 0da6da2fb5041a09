import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withPlaceholders } from '../../local-cloud/template/intrinsics.ts';
import { createLoadBalancers, type LocalLoadBalancers } from '../../local-cloud/load-balancers/load-balancers.ts';
import { forwardToVpcOrigin } from '../../local-cloud/cloudfront/vpc-origin.ts';
import type { SynthesizedTemplate } from '../../local-cloud/template/template.ts';

/**
 * The synthesized mode's load balancers (local-cloud/load-balancers/load-balancers.ts) on a template of one ALB, its listener
 * and target group, with targets that are real servers on loopback: the health check, round robin, deregistration,
 * and the load balancer's 503 when no target is healthy.
 */
const template: SynthesizedTemplate = {
  assemblyDir: '/nonexistent',
  stackName: 'Test',
  resources: {
    Alb: { Type: 'AWS::ElasticLoadBalancingV2::LoadBalancer', Properties: { Scheme: 'internal' } },
    Listener: {
      Type: 'AWS::ElasticLoadBalancingV2::Listener',
      Properties: { LoadBalancerArn: { Ref: 'Alb' }, Port: 80, DefaultActions: [{ Type: 'forward', TargetGroupArn: { Ref: 'Group' } }] },
    },
    Group: {
      Type: 'AWS::ElasticLoadBalancingV2::TargetGroup',
      Properties: {
        Port: 8080,
        HealthCheckPort: '8081',
        HealthCheckPath: '/health',
        HealthCheckIntervalSeconds: 1,
        UnhealthyThresholdCount: 2,
      },
    },
  },
};
const values = { accountId: '123456789012', region: 'us-east-1', stackName: 'Test' };

let balancers: LocalLoadBalancers;
const servers: Server[] = [];
const healthy = new Map<number, boolean>();

/** A target: its traffic port answers with its name, its health port 200 while `healthy` says so. */
async function target(name: string): Promise<{ port: number; health: number }> {
  const listen = async (server: Server) => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const port = await listen(createServer((_req, res) => res.end(name)));
  const health: number = await listen(
    createServer((req, res) => res.writeHead(req.url === '/health' && healthy.get(health) ? 200 : 503).end()),
  );
  healthy.set(health, true);
  return { port, health };
}

const register = (taskArn: string, t: { port: number; health: number }) =>
  balancers.register('Group', { taskArn, port: t.port, portOf: (p) => (p === 8081 ? t.health : undefined) });

beforeAll(() => {
  balancers = createLoadBalancers(template, { ...values, physical: withPlaceholders(template, values, new Map()) });
});
afterAll(() => {
  balancers.stop();
  for (const server of servers) server.close();
});

describe('local load balancers', () => {
  it('no healthy target: the route says so, and a request gets the load balancer 503 with its body drained', async () => {
    expect(balancers.route('Alb', 80)).toEqual({ kind: 'no-healthy-target' });
    expect(balancers.route('Alb', 443)).toEqual({ kind: 'no-listener' });
    const proxy = createServer((req, res) => {
      const request = { method: 'POST', uri: '/', headers: {}, cookies: {} };
      void forwardToVpcOrigin(
        req,
        res,
        request,
        { target: { kind: 'load-balancer', logicalId: 'Alb' }, port: 80, readTimeoutMs: 5000 },
        {
          forwardedHeaders: 'all-except-host',
          viewerIp: '127.0.0.1',
          rawQuery: '',
          loadBalancers: balancers,
        },
      );
    });
    servers.push(proxy);
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const reply = await fetch(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`, { method: 'POST', body: 'x'.repeat(100_000) });
    expect(reply.status).toBe(503);
    expect(await reply.text()).toBe('503 Service Temporarily Unavailable');
  });

  it('a target is used once its health check on the health port answers 200; requests go round robin', async () => {
    const [a, b] = [await target('a'), await target('b')];
    register('task-a', a);
    register('task-b', b);
    await vi.waitFor(() => expect(balancers.isHealthy('Group', 'task-a') && balancers.isHealthy('Group', 'task-b')).toBe(true), {
      timeout: 5000,
      interval: 50,
    });
    const ports = [0, 1, 2, 3].map(() => {
      const route = balancers.route('Alb', 80);
      if (route.kind !== 'target') throw new Error(route.kind);
      expect(route.hostHeader).toMatch(/^internal-alb-\d+\.us-east-1\.elb\.amazonaws\.com$/);
      return route.port;
    });
    expect(ports).toEqual([a.port, b.port, a.port, b.port]);
  });

  it('a target out after UnhealthyThresholdCount failed checks, and a deregistered one, get no request', async () => {
    const routed = () => {
      const route = balancers.route('Alb', 80);
      return route.kind === 'target' ? route.port : route.kind;
    };
    const [a, b] = [await target('a2'), await target('b2')];
    balancers.deregister('Group', 'task-a');
    balancers.deregister('Group', 'task-b');
    register('task-a2', a);
    register('task-b2', b);
    await vi.waitFor(() => expect(balancers.isHealthy('Group', 'task-b2')).toBe(true), { timeout: 5000, interval: 50 });
    healthy.set(b.health, false);
    // Two failed checks at the 1 s interval.
    await vi.waitFor(() => expect(balancers.isHealthy('Group', 'task-b2')).toBe(false), { timeout: 5000, interval: 100 });
    expect([routed(), routed()]).toEqual([a.port, a.port]);
    balancers.deregister('Group', 'task-a2');
    expect(routed()).toBe('no-healthy-target');
  });
});

import { logger } from '../../lib/logger.ts';
import type { EcsServiceDefinition } from './ecs-template.ts';

/**
 * The ECS service scheduler of the synthesized mode: each AWS::ECS::Service of the template keeps its desiredCount
 * tasks of its task definition running (placed by the local ECS as RunTask places them), registers each RUNNING
 * task in the target groups of its `LoadBalancers`, and replaces a task that stopped (after a backoff while
 * tasks keep failing to start, as ECS throttles a service whose tasks fail).
 */

/** What the scheduler sees of a task. */
export interface ServiceTask {
  taskArn: string;
  lastStatus: string;
  stoppedReason?: string;
  output: string;
  /** Per container name, the loopback port of each mapped container port (task-ports.ts). */
  ports: Map<string, Map<number, number>>;
}

/** A RUNNING task in a target group: its traffic port on loopback, and the loopback port of any container port. */
export interface ServiceTarget {
  taskArn: string;
  port: number;
  portOf(containerPort: number): number | undefined;
}

/** The load balancers' side (load-balancers.ts): where targets register, and whether one passes its health check. */
export interface TargetRegistry {
  register(targetGroupLogicalId: string, target: ServiceTarget): void;
  deregister(targetGroupLogicalId: string, taskArn: string): void;
  isHealthy(targetGroupLogicalId: string, taskArn: string): boolean;
}

/** Places one task of a service; `onRunning` is called once its containers run, `stopped` settles once it stopped. */
export type ServiceTaskLauncher = (service: EcsServiceDefinition, onRunning: () => void) => { task: ServiceTask; stopped: Promise<void> };

export interface ServiceScheduler {
  /** Resolves once every service has desiredCount RUNNING tasks, each healthy in its target groups. */
  steady(timeoutMs: number): Promise<void>;
  /** No task is placed or replaced any more (the platform stops them). */
  stop(): void;
}

/** A service with its running tasks and, per task, the loopback port of each mapped container port (the banner). */
export interface ServiceView {
  name: string;
  family: string;
  desiredCount: number;
  tasks: { taskArn: string; ports: { containerPort: number; loopbackPort: number }[] }[];
}

/** What ECS records as a service task's startedBy. */
export const serviceStartedBy = (service: EcsServiceDefinition) => `ecs-svc/${service.name}`;

export function serviceViews(
  services: EcsServiceDefinition[],
  tasks: (ServiceTask & { startedBy?: string })[],
  familyOf: (taskDefinitionArn: string) => string,
): ServiceView[] {
  return services.map((service) => ({
    name: service.name,
    family: familyOf(service.taskDefinitionArn),
    desiredCount: service.desiredCount,
    tasks: tasks
      .filter((task) => task.startedBy === serviceStartedBy(service) && task.lastStatus === 'RUNNING')
      .map((task) => ({
        taskArn: task.taskArn,
        ports: [...task.ports.values()].flatMap((ports) =>
          [...ports].map(([containerPort, loopbackPort]) => ({ containerPort, loopbackPort })),
        ),
      })),
  }));
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

function portOf(task: ServiceTask, containerPort: number): number | undefined {
  for (const ports of task.ports.values()) if (ports.has(containerPort)) return ports.get(containerPort);
  return undefined;
}

export function startServiceScheduler(
  services: EcsServiceDefinition[],
  launch: ServiceTaskLauncher,
  targets: TargetRegistry,
  /** What else a running task needs before the start counts it (a task on a container instance: its host ports listen). */
  taskReady: (service: EcsServiceDefinition, task: ServiceTask) => boolean = () => true,
): ServiceScheduler {
  let stopping = false;
  const live = new Map<string, ServiceTask[]>(services.map((service) => [service.logicalId, []]));
  const lastStopped = new Map<string, ServiceTask>();
  const failures = new Map<string, number>();

  const place = (service: EcsServiceDefinition): void => {
    if (stopping) return;
    let ran = false;
    const { task, stopped } = launch(service, () => {
      ran = true;
      for (const entry of service.loadBalancers) {
        const port = task.ports.get(entry.containerName)?.get(entry.containerPort);
        if (port === undefined) continue;
        targets.register(entry.targetGroupLogicalId, { taskArn: task.taskArn, port, portOf: (p) => portOf(task, p) });
      }
    });
    live.get(service.logicalId)!.push(task);
    void stopped.then(() => {
      for (const entry of service.loadBalancers) targets.deregister(entry.targetGroupLogicalId, task.taskArn);
      const tasks = live.get(service.logicalId)!;
      tasks.splice(tasks.indexOf(task), 1);
      lastStopped.set(service.logicalId, task);
      if (stopping) return;
      const failed = ran ? 0 : (failures.get(service.logicalId) ?? 0) + 1;
      failures.set(service.logicalId, failed);
      logger.warn('A service task stopped; the service scheduler replaces it', {
        service: service.name,
        taskArn: task.taskArn,
        stoppedReason: task.stoppedReason,
      });
      const delay = failed ? Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failed - 1)) : 0;
      setTimeout(() => place(service), delay).unref();
    });
  };
  for (const service of services) for (let i = 0; i < service.desiredCount; i++) place(service);

  const ready = (service: EcsServiceDefinition) =>
    live
      .get(service.logicalId)!
      .filter(
        (task) =>
          task.lastStatus === 'RUNNING' &&
          taskReady(service, task) &&
          service.loadBalancers.every((entry) => targets.isHealthy(entry.targetGroupLogicalId, task.taskArn)),
      ).length >= service.desiredCount;

  return {
    async steady(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const waiting = services.find((service) => !ready(service));
        if (!waiting) return;
        if (stopping) throw new Error('The platform stopped before its services were steady');
        if (Date.now() > deadline) {
          const stoppedTask = lastStopped.get(waiting.logicalId);
          const why = stoppedTask
            ? ` A task stopped: ${stoppedTask.stoppedReason ?? 'no reason'}. Its output ended with: ${stoppedTask.output.slice(-2000)}`
            : '';
          throw new Error(`Service ${waiting.name} has not had ${waiting.desiredCount} healthy tasks within ${timeoutMs / 1000} s.${why}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop() {
      stopping = true;
    },
  };
}

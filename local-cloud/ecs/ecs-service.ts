import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { probeSandbox, type SandboxCapabilities } from '../../lib/sandbox/capabilities.ts';
import { localConfig } from '../../lib/local-config.ts';
import { ContainerStartError, startContainer, type RunningContainer } from './containers.ts';
import {
  serviceStartedBy,
  serviceViews,
  startServiceScheduler,
  type ServiceScheduler,
  type ServiceTaskLauncher,
  type ServiceView,
  type TargetRegistry,
} from './ecs-scheduler.ts';
import type { Cluster, EcsServiceDefinition, TaskContainer, TaskDefinition } from './ecs-template.ts';
import type { ContainerInstances } from './container-instances.ts';
import { mapContainerPorts } from './task-ports.ts';

/**
 * The ECS of the synthesized mode: moto records RunTask but runs nothing, so the IAM proxy hands a Lambda's
 * allowed ECS calls here instead (iam-proxy.ts `services`). RunTask, DescribeTasks and StopTask for the
 * template's clusters and Fargate task definitions, in ECS's JSON protocol with its error names; a task's
 * containers run from their image assets as local processes (containers.ts), and the task walks ECS's
 * states: PROVISIONING, PENDING, RUNNING (startedAt), STOPPED with each container's exit code, a stopCode
 * (EssentialContainerExited, UserInitiated, TaskFailedToStart) and a stoppedReason.
 */

/** RunTask's limit on the JSON of its containerOverrides. */
export const CONTAINER_OVERRIDES_LIMIT = 8192;

/** How long a stopped task stays describable (ECS keeps it at least an hour). */
const STOPPED_KEPT_MS = 60 * 60 * 1000;

/** A container's output kept per task (the log group's stand-in, for a test or an operator to read). */
const OUTPUT_KEPT_CHARS = 64 * 1024;

export interface LocalTask {
  taskArn: string;
  clusterArn: string;
  taskDefinitionArn: string;
  startedBy?: string;
  lastStatus: 'PROVISIONING' | 'PENDING' | 'RUNNING' | 'STOPPED';
  desiredStatus: 'RUNNING' | 'STOPPED';
  createdAt: number;
  startedAt?: number;
  stoppingAt?: number;
  stoppedAt?: number;
  stopCode?: 'EssentialContainerExited' | 'UserInitiated' | 'TaskFailedToStart';
  stoppedReason?: string;
  containers: { containerArn: string; name: string; lastStatus: string; exitCode?: number; reason?: string }[];
  /** What the containers printed (stdout and stderr), the last 64 KiB. */
  output: string;
}

export interface LocalEcsService {
  /** Answers one ECS API request the IAM proxy allowed. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void>;
  /** Every task run since the start (a test counts them, or reads why one stopped). */
  tasks(): LocalTask[];
  /** Stops a task as StopTask would, from outside the template's roles (a test plays a Spot interruption). */
  stopTask(taskArn: string, reason: string): void;
  /**
   * Starts the template's services as CloudFormation creates them (each its desiredCount tasks, replaced when one
   * stops) and resolves once every task runs and is healthy in its target groups, or rejects after `timeoutMs`.
   */
  startServices(targets: TargetRegistry, timeoutMs: number): Promise<void>;
  /** Each service with its running tasks and, per task, the loopback port of each mapped container port (the banner). */
  services(): ServiceView[];
  stop(): Promise<void>;
}

interface ContainerOverride {
  name?: string;
  environment?: { name: string; value: string }[];
  command?: string[];
}

/** What RunTask reads of its input (the worker's call: lib/functions/hosts/cloud/queued-task.ts). */
interface RunTaskInput {
  cluster?: string;
  taskDefinition?: string;
  launchType?: string;
  capacityProviderStrategy?: { capacityProvider?: string; weight?: number; base?: number }[];
  count?: number;
  startedBy?: string;
  networkConfiguration?: { awsvpcConfiguration?: { subnets?: string[] } };
  overrides?: { containerOverrides?: ContainerOverride[] };
}

class EcsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const seconds = (ms: number) => ms / 1000;

/** A task as DescribeTasks shows it (timestamps in epoch seconds, as ECS's JSON protocol has them). */
function view(task: LocalTask, definition: TaskDefinition) {
  const { output: _output, createdAt, startedAt, stoppingAt, stoppedAt, ...rest } = task;
  return {
    ...rest,
    createdAt: seconds(createdAt),
    ...(startedAt ? { startedAt: seconds(startedAt) } : {}),
    ...(stoppingAt ? { stoppingAt: seconds(stoppingAt) } : {}),
    ...(stoppedAt ? { stoppedAt: seconds(stoppedAt), executionStoppedAt: seconds(stoppedAt) } : {}),
    launchType: 'FARGATE',
    cpu: definition.cpu,
    memory: String(definition.memoryMiB),
    containers: task.containers.map((container) => ({ ...container, taskArn: task.taskArn })),
  };
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID(), ...headers });
  res.end(JSON.stringify(value));
}

/** RunTask's checks of what the caller sends, in ECS's words: the task definition's launch type, network and overrides. */
function checkRunTask(body: RunTaskInput, definition: TaskDefinition, cluster: Cluster): void {
  const count = body.count ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > 10)
    throw new EcsError('InvalidParameterException', 'count must be between 1 and 10.');
  if (body.capacityProviderStrategy !== undefined) {
    // A Fargate capacity provider instead of the launch type (the warm pool's blank tasks on FARGATE_SPOT): it must be
    // associated with the cluster, and the two ways of saying where a task runs exclude each other.
    if (body.launchType !== undefined)
      throw new EcsError('InvalidParameterException', 'Specifying both a launch type and capacity provider strategy is not supported.');
    for (const item of body.capacityProviderStrategy) {
      const name = String(item.capacityProvider ?? '');
      if (!cluster.capacityProviders.includes(name))
        throw new EcsError('InvalidParameterException', `The specified capacity provider ${name} is not associated with the cluster.`);
      if (name !== 'FARGATE' && name !== 'FARGATE_SPOT')
        throw new EcsError('InvalidParameterException', `The local ECS runs Fargate capacity providers only, not ${name}.`);
    }
  } else if (body.launchType !== 'FARGATE') {
    throw new EcsError('InvalidParameterException', `Task definition does not support launch_type ${body.launchType ?? 'EC2'}.`);
  }
  if (definition.networkMode === 'awsvpc') {
    const vpc = body.networkConfiguration?.awsvpcConfiguration;
    if (!vpc)
      throw new EcsError('InvalidParameterException', "Network Configuration must be provided when networkMode 'awsvpc' is specified.");
    if (!Array.isArray(vpc.subnets) || vpc.subnets.length === 0)
      throw new EcsError('InvalidParameterException', 'subnets can not be empty.');
  }
  if (body.startedBy !== undefined && String(body.startedBy).length > 36)
    throw new EcsError('InvalidParameterException', 'startedBy must be at most 36 characters.');
  const overrides = body.overrides?.containerOverrides ?? [];
  if (JSON.stringify(overrides).length > CONTAINER_OVERRIDES_LIMIT)
    throw new EcsError('InvalidParameterException', `Container Overrides length must be at most ${CONTAINER_OVERRIDES_LIMIT}`);
  for (const override of overrides) {
    if (!definition.containers.some((container) => container.definition.Name === override.name))
      throw new EcsError(
        'InvalidParameterException',
        `Override for container named ${override.name} is not a container in the TaskDefinition.`,
      );
  }
}

interface EcsOptions {
  region: string;
  accountId: string;
  clusters: Cluster[];
  taskDefinitions: TaskDefinition[];
  services?: EcsServiceDefinition[];
  /**
   * Variables set on a service task's containers over its definition's: the platform's local settings, as its Lambdas
   * get them (the door reads the same settings as the router). A RunTask task keeps exactly its definition's.
   */
  localEnvironment?: () => Record<string, string | null>;
  /** The template's container instances, where a service of launch type EC2 places its tasks. */
  instances?: ContainerInstances;
  /** The keys a task role's containers carry (the IAM proxy knows the role by them) and where they call AWS. */
  roleCredentials(definition: TaskDefinition): { accessKeyId: string; secretAccessKey: string; endpoint: string };
}

/** What a task holds beyond its ECS view: its containers and, per container, the loopback port of each mapped port. */
type Task = LocalTask & {
  definition: TaskDefinition;
  running: RunningContainer[];
  overrides: ContainerOverride[];
  ports: Map<string, Map<number, number>>;
  /** Placed by the service scheduler: its containers get the local environment. */
  ofService: boolean;
};

const USER_STOPPED = 'Task stopped by user';

function stopped(task: LocalTask, stopCode: LocalTask['stopCode'], reason: string): void {
  const now = Date.now();
  task.stoppingAt ??= now;
  Object.assign(task, { lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stoppedAt: now, stopCode, stoppedReason: reason });
}

// docker stop's grace: the container's StopTimeout (ECS: 30 s by default); LOCAL_ECS_STOP_TIMEOUT_SECONDS shortens it.
const stopTimeoutMs = (container: TaskContainer) => 1000 * (localConfig.ecsStopTimeoutSeconds() ?? container.definition.StopTimeout ?? 30);

class LocalEcs {
  readonly tasks = new Map<string, Task>();
  private caps: SandboxCapabilities | null = null;
  private sequence = 0;

  constructor(private readonly options: EcsOptions) {}

  clusterOf(raw: unknown): Cluster {
    const name = String(raw ?? 'default');
    const cluster = this.options.clusters.find((c) => c.arn === name || c.name === name);
    if (!cluster) throw new EcsError('ClusterNotFoundException', 'Cluster not found.');
    return cluster;
  }

  definitionOf(raw: unknown): TaskDefinition {
    const text = String(raw ?? '');
    const definition = this.options.taskDefinitions.find((d) => [d.arn, d.family, `${d.family}:${d.revision}`].includes(text));
    if (!definition) throw new EcsError('ClientException', 'TaskDefinition not found.');
    return definition;
  }

  taskOf(cluster: Cluster, raw: unknown): Task | undefined {
    const text = String(raw ?? '');
    return [...this.tasks.values()].find((t) => t.clusterArn === cluster.arn && (t.taskArn === text || t.taskArn.endsWith(`/${text}`)));
  }

  private async startOne(task: Task, container: TaskContainer, index: number): Promise<RunningContainer> {
    const override = task.overrides.find((o) => o.name === container.definition.Name) ?? {};
    const environment = { ...container.environment };
    for (const [name, value] of Object.entries((task.ofService && this.options.localEnvironment?.()) || {})) {
      if (value === null) delete environment[name];
      else environment[name] = value;
    }
    for (const variable of override.environment ?? []) environment[variable.name] = variable.value;
    if ('refused' in container.image) throw new ContainerStartError(container.image.refused);
    task.ports.set(container.definition.Name, await mapContainerPorts(container.definition, environment));
    return startContainer({
      definition: container.definition,
      imageDir: container.image.dir,
      dockerfile: container.image.dockerfile,
      environment,
      command: override.command,
      credentials: { ...this.options.roleCredentials(task.definition), region: this.options.region },
      memoryMiB: task.definition.memoryMiB,
      caps: (this.caps ??= probeSandbox()),
      id: `i${process.pid}-task-${++this.sequence}-${index}`,
      onOutput: (_stream, text) => {
        task.output = (task.output + text).slice(-OUTPUT_KEPT_CHARS);
      },
    });
  }

  /** PENDING while the containers are prepared, RUNNING once they are started, STOPPED when an essential one exits. */
  async launch(task: Task, onRunning?: () => void): Promise<void> {
    task.lastStatus = 'PENDING';
    try {
      for (const [index, container] of task.definition.containers.entries()) {
        if (task.desiredStatus === 'STOPPED') break;
        task.running.push(await this.startOne(task, container, index));
      }
    } catch (error) {
      const reason = error instanceof ContainerStartError ? `CannotStartContainerError: ${error.message}` : String(error);
      for (const container of task.containers) container.reason = reason;
      for (const running of task.running) running.stop(0);
      return stopped(task, 'TaskFailedToStart', reason);
    }
    if (task.desiredStatus === 'STOPPED') {
      for (const running of task.running) running.stop(0);
      return stopped(task, 'UserInitiated', task.stoppedReason ?? USER_STOPPED);
    }
    Object.assign(task, { lastStatus: 'RUNNING', startedAt: Date.now() });
    for (const container of task.containers) container.lastStatus = 'RUNNING';
    onRunning?.();
    await Promise.all(task.running.map((running, index) => this.watch(task, running, index)));
  }

  private async watch(task: Task, running: RunningContainer, index: number): Promise<void> {
    const exit = await running.exited;
    const container = task.containers[index]!;
    Object.assign(container, { lastStatus: 'STOPPED', exitCode: exit.exitCode });
    if (exit.outOfMemory) container.reason = 'OutOfMemoryError: Container killed due to memory usage';
    const definition = task.definition.containers[index]!;
    if (task.lastStatus === 'STOPPED' || !definition.essential) return;
    // The other containers get docker stop, as ECS stops a task whose essential container exited.
    for (const other of task.running) other.stop(stopTimeoutMs(definition));
    if (task.desiredStatus === 'STOPPED') stopped(task, 'UserInitiated', task.stoppedReason ?? USER_STOPPED);
    else stopped(task, 'EssentialContainerExited', 'Essential container in task exited');
  }

  runTask(body: RunTaskInput) {
    const cluster = this.clusterOf(body.cluster);
    const definition = this.definitionOf(body.taskDefinition);
    checkRunTask(body, definition, cluster);
    for (const [arn, task] of this.tasks) if (task.stoppedAt && Date.now() - task.stoppedAt > STOPPED_KEPT_MS) this.tasks.delete(arn);
    const started = Array.from({ length: body.count ?? 1 }, () => {
      const task = this.newTask(cluster, definition, body.startedBy, body.overrides?.containerOverrides ?? [], false);
      // Placed after the reply, as ECS answers RunTask before the task runs.
      setImmediate(() => void this.launch(task));
      return task;
    });
    return { tasks: started.map((task) => view(task, definition)), failures: [] };
  }

  /** A task PROVISIONING, not yet placed: `launch` places it. */
  newTask(
    cluster: Cluster,
    definition: TaskDefinition,
    startedBy: string | undefined,
    overrides: ContainerOverride[],
    ofService: boolean,
  ): Task {
    const { region, accountId } = this.options;
    const id = randomBytes(16).toString('hex');
    const task: Task = {
      taskArn: `arn:aws:ecs:${region}:${accountId}:task/${cluster.name}/${id}`,
      clusterArn: cluster.arn,
      taskDefinitionArn: definition.arn,
      ...(startedBy ? { startedBy: String(startedBy) } : {}),
      lastStatus: 'PROVISIONING',
      desiredStatus: 'RUNNING',
      createdAt: Date.now(),
      containers: definition.containers.map((container) => ({
        containerArn: `arn:aws:ecs:${region}:${accountId}:container/${cluster.name}/${id}/${randomUUID()}`,
        name: container.definition.Name,
        lastStatus: 'PENDING',
      })),
      output: '',
      definition,
      running: [],
      overrides,
      ports: new Map(),
      ofService,
    };
    this.tasks.set(task.taskArn, task);
    return task;
  }

  stopTask(body: { cluster?: string; task?: string; reason?: string }) {
    const task = this.taskOf(this.clusterOf(body.cluster), body.task);
    if (!task) throw new EcsError('InvalidParameterException', 'The referenced task was not found.');
    if (task.desiredStatus !== 'STOPPED') {
      Object.assign(task, {
        desiredStatus: 'STOPPED',
        stoppingAt: Date.now(),
        stoppedReason: body.reason ? String(body.reason) : USER_STOPPED,
      });
      for (const [index, container] of task.definition.containers.entries()) task.running[index]?.stop(stopTimeoutMs(container));
    }
    return { task: view(task, task.definition) };
  }

  describeTasks(body: { cluster?: string; tasks?: string[] }) {
    const cluster = this.clusterOf(body.cluster);
    const found = ((body.tasks ?? []) as string[]).map((raw) => ({ raw, task: this.taskOf(cluster, raw) }));
    return {
      tasks: found.flatMap(({ task }) => (task ? [view(task, task.definition)] : [])),
      failures: found.filter(({ task }) => !task).map(({ raw }) => ({ arn: raw, reason: 'MISSING' })),
    };
  }
}

export function createLocalEcsService(options: EcsOptions): LocalEcsService {
  const ecs = new LocalEcs(options);
  let scheduler: ServiceScheduler | undefined;
  const operations: Record<string, (input: Record<string, never>) => unknown> = {
    RunTask: (input) => ecs.runTask(input),
    DescribeTasks: (input) => ecs.describeTasks(input),
    StopTask: (input) => ecs.stopTask(input),
  };
  return {
    async handle(req, res, body) {
      const target = String(req.headers['x-amz-target'] ?? '');
      const operation = operations[target.slice(target.lastIndexOf('.') + 1)];
      try {
        if (!operation) throw new EcsError('InvalidParameterException', `The local ECS does not offer ${target || 'this request'}`);
        sendJson(res, 200, operation(body.length ? JSON.parse(body.toString('utf8')) : {}));
      } catch (error) {
        const failed = error instanceof EcsError ? error : new EcsError('ClientException', (error as Error).message);
        sendJson(res, 400, { __type: failed.type, message: failed.message }, { 'x-amzn-errortype': failed.type });
      }
    },
    stopTask: (taskArn, reason) => {
      const task = ecs.tasks.get(taskArn);
      if (task) ecs.stopTask({ cluster: task.clusterArn, task: taskArn, reason });
    },
    tasks: () => [...ecs.tasks.values()].map(({ definition: _d, running: _r, overrides: _o, ports: _p, ofService: _s, ...task }) => task),
    startServices(targets, timeoutMs) {
      const listening = new Set<string>();
      const launch: ServiceTaskLauncher = (service, onRunning) => {
        const cluster = ecs.clusterOf(service.clusterArn);
        const task = ecs.newTask(cluster, ecs.definitionOf(service.taskDefinitionArn), serviceStartedBy(service), [], true);
        if (service.launchType !== 'EC2') return { task, stopped: ecs.launch(task, onRunning) };
        // ECS places an EC2 task on a container instance of its cluster whose host ports are free; here the one
        // instance such a service has (the door's). A task that cannot be placed stops and is tried again.
        const instance = options.instances?.ofCluster(cluster.name)[0];
        if (!instance) {
          stopped(task, 'TaskFailedToStart', `unable to place a task: no container instance is registered in cluster ${cluster.name}`);
          return { task, stopped: Promise.resolve() };
        }
        const onInstance = () => {
          const hostPorts = new Map<number, number>();
          for (const container of task.definition.containers)
            for (const mapping of container.definition.PortMappings ?? []) {
              const port = task.ports.get(container.definition.Name)?.get(mapping.ContainerPort);
              if (mapping.HostPort && port !== undefined) hostPorts.set(mapping.HostPort, port);
            }
          if (!options.instances!.bind(instance.logicalId, task.taskArn, hostPorts)) {
            ecs.stopTask({ cluster: cluster.arn, task: task.taskArn, reason: `a host port of instance ${instance.logicalId} is taken` });
            return;
          }
          onRunning();
          // The start counts the task once its host ports accept connections (what CloudFront's VPC origin reaches).
          const poll = async () => {
            while (task.lastStatus === 'RUNNING' && !(await options.instances!.listening(task.taskArn)))
              await new Promise((resolve) => setTimeout(resolve, 100));
            if (task.lastStatus === 'RUNNING') listening.add(task.taskArn);
          };
          void poll();
        };
        const done = ecs.launch(task, onInstance).finally(() => {
          options.instances!.release(task.taskArn);
          listening.delete(task.taskArn);
        });
        return { task, stopped: done };
      };
      scheduler = startServiceScheduler(options.services ?? [], launch, targets, (service, task) =>
        service.launchType === 'EC2' ? listening.has(task.taskArn) : true,
      );
      return scheduler.steady(timeoutMs);
    },
    services: () => serviceViews(options.services ?? [], [...ecs.tasks.values()], (arn) => ecs.definitionOf(arn).family),
    async stop() {
      // The scheduler first: a task stopped now is not replaced.
      scheduler?.stop();
      const running = [...ecs.tasks.values()].flatMap((task) => task.running);
      for (const container of running) container.stop(0);
      await Promise.all(running.map((container) => container.exited));
    },
  };
}

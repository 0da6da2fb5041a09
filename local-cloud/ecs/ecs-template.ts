import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerDefinition } from './containers.ts';
import { resolveString, resolveValue, type LocalStackValues } from '../template/intrinsics.ts';
import { resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';

/** One container of a task definition: its definition, its variables, and its image asset (or why it has none). */
export interface TaskContainer {
  definition: ContainerDefinition;
  environment: Record<string, string>;
  essential: boolean;
  image: { dir: string; dockerfile: string } | { refused: string };
}

/** A Fargate task definition of the template, resolved against the local values. */
export interface TaskDefinition {
  arn: string;
  family: string;
  revision: number;
  cpu: string;
  memoryMiB: number;
  networkMode: string;
  compatibilities: string[];
  taskRoleLogicalId: string | null;
  /** The task role and the execution role, as RunTask passes them (iam:PassRole). */
  passedRoles: string[];
  containers: TaskContainer[];
}

export interface Cluster {
  arn: string;
  name: string;
  /** The capacity providers its AWS::ECS::ClusterCapacityProviderAssociations names (FARGATE, FARGATE_SPOT). */
  capacityProviders: string[];
}

/** An AWS::ECS::Service of the template: the tasks the service scheduler keeps running, and where they register. */
export interface EcsServiceDefinition {
  logicalId: string;
  name: string;
  clusterArn: string;
  taskDefinitionArn: string;
  desiredCount: number;
  /** EC2: its tasks go on the cluster's container instances (container-instances.ts); else Fargate. */
  launchType: 'EC2' | 'FARGATE';
  /** Its `LoadBalancers`: the target group (by logical id) each task registers in, with the container port. */
  loadBalancers: { containerName: string; containerPort: number; targetGroupLogicalId: string }[];
}

/** The template's Docker image assets by their tag (the asset hash): the folder and Dockerfile `cdk deploy` builds. */
function dockerImageAssets(assemblyDir: string): Map<string, { dir: string; dockerfile: string }> {
  const assets = new Map<string, { dir: string; dockerfile: string }>();
  let manifest: { dockerImages?: Record<string, { source?: { directory?: string; dockerFile?: string } }> } = {};
  try {
    const manifestFile = JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')) as {
      artifacts?: Record<string, { type: string; properties?: { file?: string } }>;
    };
    for (const artifact of Object.values(manifestFile.artifacts ?? {})) {
      if (artifact.type !== 'cdk:asset-manifest' || !artifact.properties?.file) continue;
      manifest = JSON.parse(readFileSync(join(assemblyDir, artifact.properties.file), 'utf8'));
    }
  } catch {
    return assets;
  }
  for (const [hash, image] of Object.entries(manifest.dockerImages ?? {})) {
    if (image.source?.directory)
      assets.set(hash, { dir: join(assemblyDir, image.source.directory), dockerfile: image.source.dockerFile ?? 'Dockerfile' });
  }
  return assets;
}

function containerOf(raw: Record<string, any>, values: LocalStackValues, assets: ReturnType<typeof dockerImageAssets>): TaskContainer {
  const resolved = resolveValue(raw, values) as Record<string, any>;
  const image = String(resolved.Image ?? '');
  const asset = assets.get(image.slice(image.lastIndexOf(':') + 1));
  const environment = Object.fromEntries(((resolved.Environment ?? []) as { Name: string; Value: string }[]).map((v) => [v.Name, v.Value]));
  return {
    definition: resolved as ContainerDefinition,
    environment,
    essential: resolved.Essential !== false,
    image: asset ?? { refused: `CannotPullContainerError: ${image} is not a Docker image asset of the template` },
  };
}

/** The template's ECS clusters and Fargate task definitions, as the local ECS serves them (ecs-service.ts). */
export function templateEcs(
  template: SynthesizedTemplate,
  values: LocalStackValues,
): { clusters: Cluster[]; taskDefinitions: TaskDefinition[]; services: EcsServiceDefinition[] } {
  const associations = resourcesOfType(template, 'AWS::ECS::ClusterCapacityProviderAssociations').map(([, resource]) => ({
    cluster: resource.Properties?.Cluster?.Ref as string | undefined,
    providers: (resource.Properties?.CapacityProviders ?? []) as string[],
  }));
  const clusters = resourcesOfType(template, 'AWS::ECS::Cluster').map(([id]) => {
    const physical = values.physical.get(id)!;
    const capacityProviders = associations.filter((a) => a.cluster === id).flatMap((a) => a.providers);
    return { arn: physical.attributes.Arn!, name: physical.ref, capacityProviders };
  });
  const assets = dockerImageAssets(template.assemblyDir);
  const taskDefinitions = resourcesOfType(template, 'AWS::ECS::TaskDefinition').map(([id, resource]) => {
    const props = resource.Properties ?? {};
    const arn = values.physical.get(id)!.ref;
    const [family, revision] = arn.slice(arn.indexOf('task-definition/') + 'task-definition/'.length).split(':');
    const role = props.TaskRoleArn?.['Fn::GetAtt']?.[0] ?? null;
    return {
      arn,
      family: family!,
      revision: Number(revision ?? 1),
      cpu: resolveString(props.Cpu ?? '256', values),
      // An EC2 task definition may leave the task's memory out: ECS then reserves its containers' hard limits.
      memoryMiB: Number(
        resolveString(
          props.Memory ??
            String(((props.ContainerDefinitions ?? []) as { Memory?: number }[]).reduce((sum, c) => sum + Number(c.Memory ?? 0), 0) || 512),
          values,
        ),
      ),
      networkMode: String(props.NetworkMode ?? 'bridge'),
      compatibilities: (props.RequiresCompatibilities ?? []) as string[],
      taskRoleLogicalId: role,
      passedRoles: [props.TaskRoleArn, props.ExecutionRoleArn].filter(Boolean).map((arn) => resolveString(arn, values)),
      containers: ((props.ContainerDefinitions ?? []) as Record<string, any>[]).map((raw) => containerOf(raw, values, assets)),
    };
  });
  return { clusters, taskDefinitions, services: templateServices(template, values) };
}

function templateServices(template: SynthesizedTemplate, values: LocalStackValues): EcsServiceDefinition[] {
  return resourcesOfType(template, 'AWS::ECS::Service').map(([logicalId, resource]) => {
    const props = resource.Properties ?? {};
    type Entry = { ContainerName?: string; ContainerPort?: number; TargetGroupArn?: { Ref?: string } };
    const loadBalancers = ((props.LoadBalancers ?? []) as Entry[]).map((entry) => {
      const targetGroupLogicalId = entry.TargetGroupArn?.Ref;
      if (!targetGroupLogicalId) throw new Error(`Service ${logicalId}: a load balancer entry names no target group of the template`);
      return { containerName: String(entry.ContainerName), containerPort: Number(entry.ContainerPort), targetGroupLogicalId };
    });
    return {
      logicalId,
      name: props.ServiceName ? resolveString(props.ServiceName, values) : `${template.stackName}-${logicalId}`,
      clusterArn: resolveString(props.Cluster ?? 'default', values),
      taskDefinitionArn: resolveString(props.TaskDefinition, values),
      desiredCount: Number(props.DesiredCount ?? 1),
      launchType: props.LaunchType === 'EC2' ? 'EC2' : 'FARGATE',
      loadBalancers,
    };
  });
}

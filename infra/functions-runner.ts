import { RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import { DockerImageAsset, Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { repoRoot } from './bundling.ts';
import * as path from 'node:path';
import { RUNNER_CONTAINER_NAME } from '../lib/functions/hosts/cloud/queued-task.ts';
import { FUNCTION_MEMORY_MB } from '../lib/functions/model.ts';
import { lambdaRuntime } from './bundling.ts';
import { readCapacitySettings } from './context.ts';

/** The runner program and its Dockerfile (the runner itself is lib/functions/runner/runner.mjs). */
export const runnerDirectory = path.join(repoRoot, 'lib/functions/runner');

/** The runner: a container image and a Fargate task for queued calls, a layer for the door. */
export function runnerAssets(scope: Construct, vpc: ec2.Vpc, userFunctionBoundary: iam.ManagedPolicy, stack: Stack) {
  // --- The runner: a container image for queued calls, a layer for the door ------------------
  const runnerImage = new DockerImageAsset(scope, 'RunnerImage', {
    directory: runnerDirectory,
    file: 'Dockerfile',
    platform: Platform.LINUX_AMD64,
    exclude: ['*.md', '*.test.*'],
  });
  // The same runner program, as the layer every user-function Lambda loads at /opt/runner.mjs.
  const runnerLayer = new lambda.LayerVersion(scope, 'RunnerLayer', {
    description: 'Slipway function runner (lib/functions/runner/runner.mjs), loaded by every user-function Lambda',
    code: lambda.Code.fromAsset(runnerDirectory, { exclude: ['Dockerfile', 'task.mjs', '*.md', '*.test.*'] }),
    compatibleRuntimes: [lambdaRuntime],
    compatibleArchitectures: [lambda.Architecture.ARM_64, lambda.Architecture.X86_64],
    removalPolicy: RemovalPolicy.RETAIN,
  });

  const { functionsWarmTasks } = readCapacitySettings(scope);
  const cluster = new ecs.Cluster(scope, 'InvocationsCluster', {
    vpc: vpc,
    // Container Insights bills its metrics as custom metrics for every hour a task runs: with the warm pool's blank
    // tasks that is every hour (several dollars a month, over the idle cap), so it is on only without a pool.
    containerInsightsV2: functionsWarmTasks > 0 ? ecs.ContainerInsights.DISABLED : ecs.ContainerInsights.ENABLED,
    // FARGATE_SPOT: the warm pool's blank tasks (lib/functions/hosts/cloud/warm-tasks.ts); invocations started on
    // demand stay on FARGATE.
    enableFargateCapacityProviders: functionsWarmTasks > 0,
  });
  if (functionsWarmTasks > 0)
    Validations.of(cluster).acknowledge({
      id: 'AwsSolutions-ECS4',
      reason:
        "Container Insights' custom metrics would be published every hour for the warm pool's blank tasks (several dollars a month); the free AWS/ECS metrics remain.",
    });
  const taskRole = new iam.Role(scope, 'InvocationTaskRole', {
    description: 'Task role of queued function invocations: holds no permission',
    assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }),
    permissionsBoundary: userFunctionBoundary,
  });
  const taskDefinition = new ecs.FargateTaskDefinition(scope, 'InvocationTask', {
    // The smallest Fargate CPU with the spec's 512 MB.
    cpu: 256,
    memoryLimitMiB: FUNCTION_MEMORY_MB,
    runtimePlatform: { operatingSystemFamily: ecs.OperatingSystemFamily.LINUX, cpuArchitecture: ecs.CpuArchitecture.X86_64 },
    taskRole,
  });
  taskDefinition.addVolume({ name: 'scratch' });
  const invocationLogs = new logs.LogGroup(scope, 'InvocationLogs', {
    // Queued-call console output is kept 7 days (spec, Data handling of functions).
    retention: logs.RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const container = taskDefinition.addContainer(RUNNER_CONTAINER_NAME, {
    image: ecs.ContainerImage.fromDockerImageAsset(runnerImage),
    essential: true,
    readonlyRootFilesystem: true,
    // The image's `node` user; never root.
    user: '1000:1000',
    logging: ecs.LogDrivers.awsLogs({ logGroup: invocationLogs, streamPrefix: 'invocation' }),
  });
  container.addMountPoints({ containerPath: '/tmp', sourceVolume: 'scratch', readOnly: false });
  Validations.of(taskDefinition).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'The execution role pulls the runner image: ecr:GetAuthorizationToken has no resource-level permissions; the pull itself is limited to the asset repository.',
  });
  return { runnerImage, runnerLayer, cluster, taskDefinition };
}

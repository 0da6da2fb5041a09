import { ArnFormat, Stack, Token, Validations } from 'aws-cdk-lib';
import type * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { DockerImageAsset } from 'aws-cdk-lib/aws-ecr-assets';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { cloudHostVariables } from '../lib/functions/hosts/cloud/variables.ts';
import type { HandlerFunction } from './functions.ts';
import type { GrantContext } from './grants.ts';
import { containerDoor } from './functions-door.ts';
import { computeSubnets, userCodeNetwork } from './functions-network.ts';
import { functionsDistribution, functionsRouter, grantMakeUserFunctions, userFunctionVariables } from './functions-router.ts';
import { runnerAssets } from './functions-runner.ts';
import { readCapacitySettings } from './context.ts';

/** The warm pool's size in a worker's environment (lib/config.ts functionsWarmTasks). */
export const warmTasksVariable = 'FUNCTIONS_WARM_TASKS';
import { userCodeIdentity } from './functions-user-code.ts';

export interface FunctionsRuntimeProps {
  grants: GrantContext;
  /** The environment every platform function gets (table and bucket names, FUNCTION_DOMAIN ...). */
  environment: Record<string, string>;
  /** Functions answer at {name}-{subdomain}.{functionDomain}. */
  functionDomain: string;
  /**
   * ACM certificate (us-east-1) for `*.{functionDomain}`; context `functionCertificateArn`.
   * Without it the distribution answers on its cloudfront.net name only.
   */
  certificateArn?: string;
}

/**
 * Where user functions run in the cloud (docs/functions.md):
 *
 * - the network of user code: a VPC whose private subnets reach the internet
 *   through NAT, a security group allowing TCP 443 out and nothing else, and a
 *   network ACL that denies the private, shared and link-local ranges first;
 * - the HTTPS door: CloudFront for `*.{function_domain}` in front of the
 *   router Lambda, which runs the door with the cloud host; the host makes one
 *   Lambda per built function from the runner layer, in that VPC, under the
 *   user-function role;
 * - the container door: the same door in a Node server on Fargate (two tasks in the Door subnets, an internal load
 *   balancer, a VPC origin of the distribution) for the bodies the router's function URL cannot take, chosen by the
 *   viewer function;
 * - queued invocations: the runner's container image and a Fargate task
 *   definition, started per invocation by the invocations worker
 *   (`connectInvocationsWorker`: its environment and grants).
 */
export class FunctionsRuntime extends Construct {
  readonly vpc: ec2.Vpc;
  readonly computeSecurityGroup: ec2.SecurityGroup;
  readonly computeNetworkAcl: ec2.NetworkAcl;
  readonly runnerImage: DockerImageAsset;
  readonly runnerLayer: lambda.LayerVersion;
  readonly cluster: ecs.Cluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly userFunctionRole: iam.Role;
  readonly userFunctionBoundary: iam.ManagedPolicy;
  readonly router: HandlerFunction;
  readonly routerUrl: lambda.FunctionUrl;
  readonly distribution: cloudfront.Distribution;
  readonly doorCluster: ecs.Cluster;
  readonly doorTaskDefinition: ecs.TaskDefinition;
  readonly doorTaskRole: iam.Role;
  /** The door's ECS service: its running tasks against the desired count are what to watch in either shape. */
  readonly doorService: ecs.BaseService;
  /** The default shape: the one instance the door's VPC origin targets (its status checks). */
  readonly doorInstance?: ec2.Instance;
  /** With `doorTasks` over 0: the internal load balancer and its target group (unhealthy targets). */
  readonly doorLoadBalancer?: elbv2.ApplicationLoadBalancer;
  readonly doorTargetGroup?: elbv2.ApplicationTargetGroup;
  /** Every user-function Lambda's name starts with it. */
  readonly functionNamePrefix: string;
  /** Every resource of the platform: what user code (functions, builds) is denied. */
  readonly platformResources: string[];

  constructor(scope: Construct, id: string, props: FunctionsRuntimeProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.functionNamePrefix = `${stack.stackName.slice(0, 20)}-fn-`;
    ({ vpc: this.vpc, computeSecurityGroup: this.computeSecurityGroup, computeNetworkAcl: this.computeNetworkAcl } = userCodeNetwork(this));
    ({
      platformResources: this.platformResources,
      userFunctionBoundary: this.userFunctionBoundary,
      userFunctionRole: this.userFunctionRole,
    } = userCodeIdentity(this, props.grants.state, stack));
    ({
      runnerImage: this.runnerImage,
      runnerLayer: this.runnerLayer,
      cluster: this.cluster,
      taskDefinition: this.taskDefinition,
    } = runnerAssets(this, this.vpc, this.userFunctionBoundary, stack));
    // The HTTPS door: CloudFront, the router, one Lambda per function.
    ({ router: this.router, routerUrl: this.routerUrl } = functionsRouter(this, props, stack, this));
    const door = containerDoor(this, props, this);
    ({
      cluster: this.doorCluster,
      taskDefinition: this.doorTaskDefinition,
      taskRole: this.doorTaskRole,
      service: this.doorService,
      instance: this.doorInstance,
      loadBalancer: this.doorLoadBalancer,
      targetGroup: this.doorTargetGroup,
    } = door);
    this.distribution = functionsDistribution(this, props, this.routerUrl, door.origin);
  }

  /**
   * The invocations worker (lib/workers.ts `function-invocations`) runs each
   * queued invocation as a task: it gets the cluster, the task definition, the
   * compute subnets and security group in its environment, RunTask of that
   * task definition, and DescribeTasks and StopTask of the cluster's tasks.
   */
  connectInvocationsWorker(worker: lambda.Function): void {
    const stack = Stack.of(this);
    // The warm pool's size: the worker takes a blank task when one is ready and refills the slot it emptied.
    const { functionsWarmTasks } = readCapacitySettings(this);
    worker.addEnvironment(warmTasksVariable, String(functionsWarmTasks));
    // Blank tasks wait most of their lives: Spot's price, and an interruption before an assignment costs nothing.
    if (functionsWarmTasks > 0) worker.addEnvironment(cloudHostVariables.warmCapacityProvider, 'FARGATE_SPOT');
    worker.addEnvironment(cloudHostVariables.taskCluster, this.cluster.clusterArn);
    worker.addEnvironment(cloudHostVariables.taskDefinitionArn, this.taskDefinition.taskDefinitionArn);
    worker.addEnvironment(cloudHostVariables.subnetIds, this.vpc.selectSubnets(computeSubnets).subnetIds.join(','));
    worker.addEnvironment(cloudHostVariables.securityGroupId, this.computeSecurityGroup.securityGroupId);
    this.grantRunInvocationTask(worker);
    // A task's ARN is task/{cluster name}/{id}: the grant covers this cluster's tasks only.
    const clusterTasks = stack.formatArn({
      service: 'ecs',
      resource: 'task',
      resourceName: `${this.cluster.clusterName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    worker.role!.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:DescribeTasks', 'ecs:StopTask'],
        resources: [clusterTasks],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    const rendered = (value: string) => (Token.isUnresolved(value) ? `<AWS::${value === stack.region ? 'Region' : 'AccountId'}>` : value);
    const clusterId = stack.getLogicalId(this.cluster.node.defaultChild as ecs.CfnCluster);
    Validations.of(worker.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:${rendered(stack.region)}:${rendered(stack.account)}:task/<${clusterId}>/*]`,
      reason:
        'Each queued invocation is a new task whose id ECS makes at RunTask, so the worker describes and stops tasks by the ' +
        "invocations cluster's task prefix only (and the ecs:cluster condition).",
    });
  }

  /**
   * The warm pool's keeper (lib/workers.ts `function-warm-tasks`): it starts blank tasks and describes them, so it
   * gets exactly what the invocations worker has to run and watch tasks.
   */
  connectWarmPoolKeeper(worker: lambda.Function): void {
    this.connectInvocationsWorker(worker);
  }

  /**
   * The function-lambdas worker (lib/workers.ts) makes a published deployment's Lambdas as the router would on a
   * first request: the same variables and the same grants (grantMakeUserFunctions), without InvokeFunction.
   */
  connectPrepareWorker(worker: lambda.Function): void {
    for (const [name, value] of Object.entries(userFunctionVariables(this))) worker.addEnvironment(name, value);
    grantMakeUserFunctions(worker.role!, Stack.of(this), this);
  }

  /**
   * The sweep of user-function Lambdas (handlers/workers/cloud-sweep.ts): it learns the prefix, lists the
   * account's functions (ListFunctions has no resource-level scope), reads the tags of and deletes only those
   * under the prefix.
   */
  connectSweepWorker(worker: lambda.Function): void {
    const stack = Stack.of(this);
    worker.addEnvironment(cloudHostVariables.namePrefix, this.functionNamePrefix);
    worker.role!.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:ListFunctions'], resources: ['*'] }));
    const prefixed = stack.formatArn({
      service: 'lambda',
      resource: 'function',
      resourceName: `${this.functionNamePrefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const scoped = new iam.PolicyStatement({ actions: ['lambda:ListTags', 'lambda:DeleteFunction'], resources: [prefixed] });
    worker.role!.addToPrincipalPolicy(scoped);
    const rendered = (value: string) => (Token.isUnresolved(value) ? `<AWS::${value === stack.region ? 'Region' : 'AccountId'}>` : value);
    const account = `${rendered(stack.region)}:${rendered(stack.account)}`;
    Validations.of(worker.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:${account}:function:${this.functionNamePrefix}*]`,
      reason:
        "The router makes one Lambda per built function under the stack's prefix at run time; " +
        'the sweep reads the tags of and deletes only those.',
    });
    Validations.of(worker.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Lambda ListFunctions accepts no resource-level restriction: listing is account-wide; the sweep acts on its prefix only.',
    });
  }

  /**
   * What the queued-invocations worker needs to start a runner task: RunTask
   * of this task definition in this cluster, and passing its two roles to ECS.
   */
  grantRunInvocationTask(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:RunTask'],
        resources: [this.taskDefinition.taskDefinitionArn],
        conditions: { ArnEquals: { 'ecs:cluster': this.cluster.clusterArn } },
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.taskDefinition.taskRole.roleArn, this.taskDefinition.obtainExecutionRole().roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } },
      }),
    );
  }
}

import { config } from '../../../config.ts';
/** The variables the stack gives the router and the invocations worker (infra/functions-runtime.ts); the cloud host reads them. */
export const cloudHostVariables = {
  /** Every user-function Lambda's name starts with it; the router may create and invoke only those. */
  namePrefix: 'FUNCTIONS_LAMBDA_PREFIX',
  /** The execution role of every user-function Lambda (no platform permissions, a permissions boundary). */
  roleArn: 'FUNCTIONS_ROLE_ARN',
  /** The runner layer version. */
  runnerLayerArn: 'FUNCTIONS_RUNNER_LAYER_ARN',
  /** Comma-separated private subnets whose network ACL allows HTTPS to public addresses only. */
  subnetIds: 'FUNCTIONS_SUBNET_IDS',
  /** The security group that allows TCP 443 egress and nothing else. */
  securityGroupId: 'FUNCTIONS_SECURITY_GROUP_ID',
  /** The ECS cluster queued invocations run in (the invocations worker only). */
  taskCluster: 'FUNCTIONS_TASK_CLUSTER',
  /** The runner's Fargate task definition (the invocations worker only). */
  taskDefinitionArn: 'FUNCTIONS_TASK_DEFINITION_ARN',
  /**
   * The capacity provider the warm pool's blank tasks run on (the stack: FARGATE_SPOT, associated with the cluster);
   * unset, they run on on-demand Fargate as invocations started on demand do.
   */
  warmCapacityProvider: 'FUNCTIONS_WARM_CAPACITY_PROVIDER',
  /** The container door's port for door traffic from the load balancer (handlers/edge/functions-door-server.ts). */
  doorPort: 'SLIPWAY_DOOR_PORT',
  /** The container door's port for the load balancer's health check: `GET /health` and nothing else. */
  doorHealthPort: 'SLIPWAY_DOOR_HEALTH_PORT',
} as const;

/** A variable the stack sets; its absence is a stack fault, said by name. */
export function variable(name: string): string {
  const value = config.functionsRuntimeVariable(name);
  if (!value) throw new Error(`${name} is not set (the functions runtime of the stack sets it)`);
  return value;
}

import { type Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { GrantContext } from './grants.ts';

/** What user code may do in AWS: nothing of the platform (a permissions boundary), and the user functions' role. */
export function userCodeIdentity(scope: Construct, state: GrantContext['state'], stack: Stack) {
  // --- What user code may do in AWS: nothing of the platform ---------------------------------
  const platformResources = [
    state.table.tableArn,
    `${state.table.tableArn}/index/*`,
    ...Object.values(state.buckets).flatMap((bucket) => [bucket.bucketArn, bucket.arnForObjects('*')]),
    state.accessLogsBucket.bucketArn,
    state.accessLogsBucket.arnForObjects('*'),
    ...Object.values(state.queues).map((queue) => queue.queueArn),
    ...Object.values(state.deadLetterQueues).map((queue) => queue.queueArn),
    ...Object.values(state.secrets).map((secret) => secret.secretArn),
    state.schedulerRole.roleArn,
  ];
  // Only Lambda's network-interface work is ever allowed; the platform's resources are denied even
  // if a grant were added to a role by mistake.
  const eniActions = [
    'ec2:CreateNetworkInterface',
    'ec2:DescribeNetworkInterfaces',
    'ec2:DescribeSubnets',
    'ec2:DeleteNetworkInterface',
    'ec2:AssignPrivateIpAddresses',
    'ec2:UnassignPrivateIpAddresses',
  ];
  const userFunctionBoundary = new iam.ManagedPolicy(scope, 'UserCodeBoundary', {
    description: 'Permissions boundary of every role user code runs under: VPC network interfaces only, never a platform resource',
    statements: [
      new iam.PolicyStatement({ sid: 'LambdaNetworkInterfaces', actions: eniActions, resources: ['*'] }),
      new iam.PolicyStatement({
        sid: 'NoPlatformResources',
        effect: iam.Effect.DENY,
        notActions: ['ec2:*'],
        resources: platformResources,
      }),
    ],
  });
  Validations.of(userFunctionBoundary).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'A permissions boundary only caps what a role may be granted: it allows the network-interface actions Lambda needs for VPC functions ' +
      '(EC2 cannot scope Describe calls to resources) and denies every platform resource.',
  });

  const userFunctionRole = new iam.Role(scope, 'UserFunctionRole', {
    description: 'Runs user functions (one Lambda per built function): VPC network interfaces only',
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }),
    permissionsBoundary: userFunctionBoundary,
  });
  // What AWSLambdaVPCAccessExecutionRole holds, written out so no AWS managed policy is attached.
  // No log permission at all: the spec says HTTPS calls are not recorded.
  userFunctionRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: eniActions, resources: ['*'] }));
  Validations.of(userFunctionRole).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'Lambda creates and removes the network interfaces of VPC functions with the execution role; EC2 names the interfaces at creation, ' +
      'so these actions cannot be scoped to resources (the AWSLambdaVPCAccessExecutionRole managed policy uses * for the same reason).',
  });
  return { platformResources, userFunctionBoundary, userFunctionRole };
}

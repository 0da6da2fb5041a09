import { resolveValue, type LocalStackValues } from '../template/intrinsics.ts';
import { resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';

export interface NamedPolicy {
  name: string;
  policy: { Version?: string; Statement: any[] };
}

/** What the template gives one role: its identity policies (inline, attached, managed) and its permissions boundary. */
export interface RolePolicies {
  roleLogicalId: string;
  roleName: string;
  roleArn: string;
  identityPolicies: NamedPolicy[];
  permissionBoundaryPolicies: NamedPolicy[];
}

function refOf(value: unknown): string | null {
  if (value && typeof value === 'object' && 'Ref' in (value as object)) return String((value as { Ref: unknown }).Ref);
  return null;
}

/**
 * AWS managed policies the template attaches, whose documents are AWS's, not
 * the template's: as AWS publishes them. CDK's own constructs attach this one
 * (the console's bucket deployment handler); ours attach none.
 */
const awsManagedPolicies: Record<string, NamedPolicy['policy']> = {
  'service-role/AWSLambdaBasicExecutionRole': {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'], Resource: '*' }],
  },
};

function managedPolicy(template: SynthesizedTemplate, reference: unknown, values: LocalStackValues): NamedPolicy {
  const logicalId = refOf(reference);
  const resource = logicalId ? template.resources[logicalId] : undefined;
  if (!logicalId || resource?.Type !== 'AWS::IAM::ManagedPolicy') {
    const awsName = /^arn:aws:iam::aws:policy\/(.+)$/.exec(String(resolveValue(reference, values)))?.[1];
    const known = awsName ? awsManagedPolicies[awsName] : undefined;
    if (known) return { name: awsName!, policy: known };
    throw new Error(`Managed policy ${JSON.stringify(reference)} is not a policy of the template; the local platform cannot evaluate it`);
  }
  return { name: logicalId, policy: resolveValue(resource.Properties!.PolicyDocument, values) as NamedPolicy['policy'] };
}

/** Every role of the template with its policies resolved against the local values. */
export function rolePolicies(template: SynthesizedTemplate, values: LocalStackValues): Map<string, RolePolicies> {
  const roles = new Map<string, RolePolicies>();
  for (const [logicalId, role] of resourcesOfType(template, 'AWS::IAM::Role')) {
    const props = role.Properties ?? {};
    const physical = values.physical.get(logicalId);
    roles.set(logicalId, {
      roleLogicalId: logicalId,
      roleName: physical?.ref ?? logicalId,
      roleArn: physical?.attributes.Arn ?? logicalId,
      identityPolicies: [
        ...(props.Policies ?? []).map((inline: any) => ({
          name: String(inline.PolicyName),
          policy: resolveValue(inline.PolicyDocument, values) as NamedPolicy['policy'],
        })),
        ...(props.ManagedPolicyArns ?? []).map((arn: unknown) => managedPolicy(template, arn, values)),
      ],
      permissionBoundaryPolicies: props.PermissionsBoundary ? [managedPolicy(template, props.PermissionsBoundary, values)] : [],
    });
  }
  // Policies attached to roles from outside the role (AWS::IAM::Policy, AWS::IAM::ManagedPolicy with Roles).
  for (const type of ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy']) {
    for (const [logicalId, policy] of resourcesOfType(template, type)) {
      for (const target of policy.Properties?.Roles ?? []) {
        const role = roles.get(refOf(target) ?? '');
        if (!role) continue;
        role.identityPolicies.push({
          name: logicalId,
          policy: resolveValue(policy.Properties!.PolicyDocument, values) as NamedPolicy['policy'],
        });
      }
    }
  }
  return roles;
}

/** The actions a role's identity policies allow, as written (the grants whose use the platform counts). */
export function grantedActions(role: RolePolicies): string[] {
  const actions = new Set<string>();
  for (const { policy } of role.identityPolicies) {
    for (const statement of policy.Statement ?? []) {
      if (statement.Effect !== 'Allow' || !statement.Action) continue;
      for (const action of [statement.Action].flat()) actions.add(String(action));
    }
  }
  return [...actions].sort();
}

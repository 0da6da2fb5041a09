import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { RolePolicies } from '../iam/iam-policies.ts';
import { resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';

/** How API Gateway is allowed to invoke one route's Lambda: the integration's role, or a permission on the function. */
export interface RouteInvoker {
  routeKey: string;
  functionLogicalId: string;
  /** The integration's `CredentialsArn` role (logical id), or null when API Gateway calls as itself. */
  credentialsRoleLogicalId: string | null;
}

function statementsOf(document: unknown): any[] {
  const statements = (document as { Statement?: unknown })?.Statement;
  return statements === undefined ? [] : [statements].flat();
}

/** A role API Gateway may assume: its trust policy allows apigateway.amazonaws.com sts:AssumeRole. */
function trustsApiGateway(template: SynthesizedTemplate, roleLogicalId: string): boolean {
  const trust = template.resources[roleLogicalId]?.Properties?.AssumeRolePolicyDocument;
  return statementsOf(trust).some(
    (statement) =>
      statement.Effect === 'Allow' &&
      [statement.Action].flat().includes('sts:AssumeRole') &&
      [statement.Principal?.Service].flat().includes('apigateway.amazonaws.com'),
  );
}

/** An AWS::Lambda::Permission of the template that lets API Gateway invoke the function. */
function permitsApiGateway(template: SynthesizedTemplate, functionLogicalId: string): boolean {
  return resourcesOfType(template, 'AWS::Lambda::Permission').some(([, permission]) => {
    const props = permission.Properties ?? {};
    const target = props.FunctionName?.['Fn::GetAtt']?.[0] ?? props.FunctionName?.Ref;
    return target === functionLogicalId && props.Action === 'lambda:InvokeFunction' && props.Principal === 'apigateway.amazonaws.com';
  });
}

async function roleMayInvoke(role: RolePolicies, functionArn: string, accountId: string): Promise<boolean> {
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:sts::${accountId}:assumed-role/${role.roleName}/apigateway`,
        action: 'lambda:InvokeFunction',
        resource: { resource: functionArn, accountId },
        contextVariables: {},
      },
      identityPolicies: role.identityPolicies,
      permissionBoundaryPolicies: role.permissionBoundaryPolicies.length ? role.permissionBoundaryPolicies : undefined,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  return result.resultType !== 'error' && result.overallResult === 'Allowed';
}

/**
 * Why API Gateway could not invoke each route's Lambda, by route key (absent:
 * it can). With credentials, API Gateway assumes the role (its trust
 * policy must name apigateway.amazonaws.com) and calls lambda:InvokeFunction
 * as that role; without, the function needs a resource-based permission for
 * API Gateway. Either missing, API Gateway answers 500 on every request.
 */
export async function invokeRefusals(
  template: SynthesizedTemplate,
  invokers: RouteInvoker[],
  roles: Record<string, RolePolicies>,
  local: { accountId: string; functionArn: (logicalId: string) => string },
): Promise<Map<string, string>> {
  const refusals = new Map<string, string>();
  for (const { routeKey, functionLogicalId, credentialsRoleLogicalId: roleId } of invokers) {
    const functionArn = local.functionArn(functionLogicalId);
    let refusal: string | null = null;
    if (roleId === null) {
      if (!permitsApiGateway(template, functionLogicalId)) refusal = 'no permission lets API Gateway invoke the function';
    } else if (!roles[roleId]) refusal = `its credentials ${roleId} are not a role of the template`;
    else if (!trustsApiGateway(template, roleId)) refusal = `the trust policy of ${roleId} does not let API Gateway assume it`;
    else if (!(await roleMayInvoke(roles[roleId], functionArn, local.accountId))) {
      refusal = `${roleId} is not allowed lambda:InvokeFunction on ${functionArn}`;
    }
    if (refusal) refusals.set(routeKey, refusal);
  }
  return refusals;
}

/**
 * Reading IAM out of a synthesized template: AWS::IAM::Policy resources and
 * the inline policies of roles, where every function role keeps its grants
 * (infra/functions.ts InlineGrantsRole).
 */
export type Statement = { Sid?: string; Effect?: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
type Resource = { Type: string; Properties: Record<string, any> };

/** Every policy document of the template, with the logical ids of the roles it applies to. */
export function policyDocuments(resources: Record<string, Resource>): { id: string; roles: string[]; statements: Statement[] }[] {
  const out: { id: string; roles: string[]; statements: Statement[] }[] = [];
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type === 'AWS::IAM::Policy') {
      out.push({
        id,
        roles: (r.Properties.Roles as { Ref: string }[]).map((role) => role.Ref),
        statements: r.Properties.PolicyDocument.Statement,
      });
    }
    if (r.Type === 'AWS::IAM::Role') {
      for (const policy of (r.Properties.Policies ?? []) as { PolicyName: string; PolicyDocument: { Statement: Statement[] } }[]) {
        out.push({ id: `${id}/${policy.PolicyName}`, roles: [id], statements: policy.PolicyDocument.Statement });
      }
    }
  }
  return out;
}

/** The statements that apply to one role. */
export function statementsOfRole(resources: Record<string, Resource>, roleId: string): Statement[] {
  return policyDocuments(resources)
    .filter((policy) => policy.roles.includes(roleId))
    .flatMap((policy) => policy.statements);
}

/** Every action granted to one role. */
export function actionsOfRole(resources: Record<string, Resource>, roleId: string): Set<string> {
  return new Set(statementsOfRole(resources, roleId).flatMap((statement) => [statement.Action].flat()));
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableWriteActions } from '../../infra/grants.ts';
import { templateRoutes } from '../../local-cloud/api-gateway/api-gateway.ts';
import { permissionReport } from '../../local-cloud/report.ts';
import type { SynthesizedTemplate } from '../../local-cloud/template/template.ts';
import { callFrom, freshIp } from '../support/console.ts';
import { expectEnvelopeError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';

/**
 * Removes one grant from one route's row, as if `table:write` were missing
 * from the `uses` of PATCH /api/v1/team/profile: the statement grantUses makes
 * for that use goes from the role of the route's Lambda in the template (a role
 * the routes of the same uses share: infra/functions.ts SharedExecution).
 */
const route = 'PATCH /api/v1/team/profile';
function withoutTableWrite(template: SynthesizedTemplate): void {
  const functionId = templateRoutes(template).find((r) => r.routeKey === route)!.functionLogicalId;
  const roleId = template.resources[functionId]!.Properties!.Role['Fn::GetAtt'][0] as string;
  const grants = template.resources[roleId]!.Properties!.Policies.find((p: { PolicyName: string }) => p.PolicyName === 'Grants');
  const before = grants.PolicyDocument.Statement.length;
  grants.PolicyDocument.Statement = grants.PolicyDocument.Statement.filter(
    (statement: { Action: string | string[] }) => JSON.stringify([statement.Action].flat()) !== JSON.stringify(tableWriteActions),
  );
  expect(grants.PolicyDocument.Statement.length).toBe(before - 1);
}

// One platform at a time: each sets the process environment the helpers that make teams use.
describe('a route row without table:write', () => {
  let platform: TestPlatform;
  let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
  beforeAll(async () => {
    platform = await startTestPlatform({ alterTemplate: withoutTableWrite });
    m = await makeTeamWithRoles('Grant Check');
  });
  afterAll(() => platform?.stop());

  it('the update is refused by IAM and answered 500 INTERNAL_ERROR; the denial names the action, the table and the role', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', { token: m.owner.token, body: { name: 'Renamed' } });
    expectEnvelopeError(reply, 500, 'INTERNAL_ERROR');
    // Reads keep working: only the removed grant is missing.
    expect((await platform.api('GET', '/api/v1/team/profile', { token: m.owner.token })).status).toBe(200);

    const usage = platform.synthesized!.usage().find((entry) => entry.denied.length > 0)!;
    expect(usage.functionName).toMatch(/^Slipway-ApiPatchTeamProfileFunction/);
    expect(usage.denied[0]!.message).toMatch(
      new RegExp(
        '^User: arn:aws:sts::123456789012:assumed-role/Slipway-ApiRouteExecutionRole\\w+/Slipway-ApiPatchTeamProfileFunction\\w+ ' +
          'is not authorized to perform: dynamodb:(UpdateItem|PutItem) on resource: arn:aws:dynamodb:us-east-1:123456789012:table/\\S+ ' +
          'because no identity-based policy allows the dynamodb:(UpdateItem|PutItem) action$',
      ),
    );
    expect(permissionReport(platform.synthesized!.usage())).toContain(`DENIED: ${usage.denied[0]!.message}`);
  });
});

describe('the template as synthesized', () => {
  let platform: TestPlatform;
  let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
  beforeAll(async () => {
    platform = await startTestPlatform();
    m = await makeTeamWithRoles('Grant Check');
  });
  afterAll(() => platform?.stop());

  it('the same update passes; the report lists what the Lambda used and the grants it holds unused', async () => {
    const reply = await platform.api('PATCH', '/api/v1/team/profile', { token: m.owner.token, body: { name: 'Renamed' } });
    expect(reply.status).toBe(200);
    const usage = platform.synthesized!.usage().find((entry) => entry.functionName.startsWith('Slipway-ApiPatchTeamProfileFunction'))!;
    expect(usage.denied).toEqual([]);
    expect(usage.actionsUsed).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:UpdateItem']));
    expect(usage.grantsUnused).toEqual(expect.arrayContaining(['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem']));
  });

  it("the Lambdas' console is the local one: a sign-in link mailed by the Lambda points at the console the platform serves", async () => {
    expect(platform.consoleUrl).toBe(`http://app.localhost:${platform.port}`);
    const email = `console-${Date.now()}@example.test`;
    const sent = await callFrom(platform, freshIp(), 'POST', '/api/v1/auth/sign-in-link', { body: { email } });
    expect(sent.status).toBe(202);
    const mail = platform.outbox.mails().find((m) => m.to.includes(email))!;
    expect(mail.text).toContain(`http://app.localhost:${platform.port}/sign-in#token=`);
  });
});

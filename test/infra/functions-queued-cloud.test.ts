import * as fs from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { readCapacitySettings } from '../../infra/context.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeSubnets, doorSubnetGroup } from '../../infra/functions-network.ts';
import { type SlipwayStack } from '../../infra/stack.ts';
import { RUNNER_CONTAINER_NAME } from '../../lib/functions/hosts/cloud/queued-task.ts';
import { cloudHostVariables } from '../../lib/functions/hosts/cloud/variables.ts';
import { queueDefinitions } from '../../lib/resources.ts';
import { workers } from '../../lib/workers.ts';
import { policyDocuments, statementsOfRole } from '../support/iam-policies.ts';
import { scratchApp } from '../support/stack-synth.ts';
import { synthesizedSlipway } from '../support/slipway-stack.ts';

/**
 * The invocations worker as the stack makes it (cdk-nag runs at synthesis):
 * where to start a queued invocation's task, and only the ECS rights that
 * takes. The Fargate run itself is tested against moto in
 * test/integration/functions-queued-cloud.test.ts.
 */
let stack: SlipwayStack;
let template: Template;
type Resource = { Type: string; Properties: Record<string, any> };
let resources: Record<string, Resource>;

beforeAll(() => {
  const { stack: built, templateFile } = synthesizedSlipway();
  stack = built;
  template = Template.fromJSON(JSON.parse(fs.readFileSync(templateFile, 'utf8')));
  resources = template.toJSON().Resources;
}, 300_000);

const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);
const workerId = () => logicalId(stack.workers.workerFunctions.get('function-invocations')!.fn);
const keeperId = () => logicalId(stack.workers.workerFunctions.get('function-warm-tasks')!.fn);

function workerStatements(): any[] {
  const role = resources[workerId()]!.Properties.Role['Fn::GetAtt'][0];
  return statementsOfRole(resources, role);
}

const actionsOf = (statement: any): string[] => [statement.Action].flat();

describe('the invocations worker', () => {
  it('gets the cluster, the task definition, the compute subnets and security group in its environment', () => {
    const variables = resources[workerId()]!.Properties.Environment.Variables;
    expect(variables[cloudHostVariables.taskCluster]).toEqual({ 'Fn::GetAtt': [logicalId(stack.functions.cluster), 'Arn'] });
    expect(variables[cloudHostVariables.taskDefinitionArn]).toEqual({ Ref: logicalId(stack.functions.taskDefinition) });
    expect(variables[cloudHostVariables.securityGroupId]).toEqual({
      'Fn::GetAtt': [logicalId(stack.functions.computeSecurityGroup), 'GroupId'],
    });
    // The compute subnets only: not the public ones, nor the container door's, which are private too.
    const compute = stack.functions.vpc.selectSubnets(computeSubnets).subnets;
    expect(compute).toHaveLength(2);
    // A list of tokens joined with commas: { Fn::Join: ['', [subnet, ',', subnet]] }.
    const [, parts] = variables[cloudHostVariables.subnetIds]['Fn::Join'];
    expect(parts.filter((part: unknown) => part !== ',')).toEqual(compute.map((subnet) => ({ Ref: logicalId(subnet as never) })));
    const subnets = JSON.stringify(variables[cloudHostVariables.subnetIds]);
    for (const subnet of stack.functions.vpc.selectSubnets({ subnetGroupName: doorSubnetGroup }).subnets)
      expect(subnets).not.toContain(logicalId(subnet as never));
  });

  it("may run the runner task definition in the cluster, and describe and stop only that cluster's tasks", () => {
    const statements = workerStatements();
    const run = statements.find((s) => actionsOf(s).includes('ecs:RunTask'));
    expect(run.Resource).toEqual({ Ref: logicalId(stack.functions.taskDefinition) });
    expect(run.Condition).toEqual({ ArnEquals: { 'ecs:cluster': { 'Fn::GetAtt': [logicalId(stack.functions.cluster), 'Arn'] } } });
    const watch = statements.find((s) => actionsOf(s).includes('ecs:StopTask'));
    expect(actionsOf(watch).sort()).toEqual(['ecs:DescribeTasks', 'ecs:StopTask']);
    expect(JSON.stringify(watch.Resource)).toContain(':task/');
    expect(JSON.stringify(watch.Resource)).toContain(logicalId(stack.functions.cluster));
    expect(watch.Condition.ArnEquals['ecs:cluster']).toEqual({ 'Fn::GetAtt': [logicalId(stack.functions.cluster), 'Arn'] });
    const pass = statements.find((s) => actionsOf(s).includes('iam:PassRole'));
    expect(pass.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' } });
    // No other ECS action, and nothing on every resource.
    const ecsActions = statements.flatMap(actionsOf).filter((a) => a.startsWith('ecs:'));
    expect(new Set(ecsActions)).toEqual(new Set(['ecs:RunTask', 'ecs:DescribeTasks', 'ecs:StopTask']));
    expect(statements.filter((s) => s.Resource === '*')).toEqual([]);
  });

  it('outlasts the task start and the 60 s budget, within the queue visibility timeout', () => {
    const row = workers.find((w) => w.name === 'function-invocations')!;
    expect(resources[workerId()]!.Properties.Timeout).toBe(row.timeoutSeconds);
    expect(row.timeoutSeconds!).toBeGreaterThanOrEqual(90 + 60 + 15);
    expect(row.timeoutSeconds!).toBeLessThanOrEqual(queueDefinitions.invocations.visibilityTimeoutSeconds);
  });

  it('no other function than it and the warm pool keeper may start, describe or stop tasks', () => {
    const workerRole = resources[workerId()]!.Properties.Role['Fn::GetAtt'][0];
    const keeperRole = resources[keeperId()]!.Properties.Role['Fn::GetAtt'][0];
    const others = policyDocuments(resources)
      .filter((policy) => !policy.roles.includes(workerRole) && !policy.roles.includes(keeperRole))
      .flatMap((policy) => policy.statements)
      .flatMap(actionsOf);
    expect(others.filter((a) => ['ecs:RunTask', 'ecs:StopTask', 'ecs:DescribeTasks'].includes(a))).toEqual([]);
  });

  it('the task definition names the runner container the host overrides', () => {
    const definition = resources[logicalId(stack.functions.taskDefinition)]!.Properties;
    expect(definition.ContainerDefinitions.map((c: any) => c.Name)).toEqual([RUNNER_CONTAINER_NAME]);
    expect(definition.ContainerDefinitions[0].ReadonlyRootFilesystem).toBe(true);
  });
});

describe('the warm pool (functionsWarmTasks, default 1)', () => {
  it('the invocations worker and the keeper get its size and its Spot capacity provider, and the same ECS grants', () => {
    for (const id of [workerId(), keeperId()]) {
      const variables = resources[id]!.Properties.Environment.Variables;
      expect(variables.FUNCTIONS_WARM_TASKS).toBe('1');
      expect(variables[cloudHostVariables.warmCapacityProvider]).toBe('FARGATE_SPOT');
      expect(variables[cloudHostVariables.taskDefinitionArn]).toEqual({ Ref: logicalId(stack.functions.taskDefinition) });
    }
    const ecsOf = (id: string) =>
      statementsOfRole(resources, resources[id]!.Properties.Role['Fn::GetAtt'][0])
        .filter((statement) => actionsOf(statement).some((a) => a.startsWith('ecs:') || a === 'iam:PassRole'))
        .map((statement) => JSON.stringify(statement));
    expect(ecsOf(keeperId()).sort()).toEqual(ecsOf(workerId()).sort());
  });

  it('the keeper runs every minute on a schedule of the platform group', () => {
    const schedules = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Scheduler::Schedule' && r.Properties.Name === 'function-warm-tasks',
    );
    expect(schedules).toHaveLength(1);
    expect(schedules[0]!.Properties.ScheduleExpression).toBe('rate(1 minute)');
    expect(schedules[0]!.Properties.Target.Arn).toEqual({ 'Fn::GetAtt': [keeperId(), 'Arn'] });
  });

  it("the invocations cluster has FARGATE_SPOT, and Container Insights off (it would bill the blank task's every hour)", () => {
    const cluster = logicalId(stack.functions.cluster);
    const associations = Object.values(resources).filter((r) => r.Type === 'AWS::ECS::ClusterCapacityProviderAssociations');
    expect(associations.find((r) => r.Properties.Cluster?.Ref === cluster)?.Properties.CapacityProviders.sort()).toEqual([
      'FARGATE',
      'FARGATE_SPOT',
    ]);
    expect(resources[cluster]!.Properties.ClusterSettings).toEqual([{ Name: 'containerInsights', Value: 'disabled' }]);
  });

  it('the context value: 0 turns it off, 1 to 10 sizes it, anything else stops the synthesis', () => {
    const read = (value: unknown) =>
      readCapacitySettings(scratchApp({ context: value === undefined ? {} : { functionsWarmTasks: value } })).functionsWarmTasks;
    expect(read(undefined)).toBe(1);
    expect(read('0')).toBe(0);
    expect(read(3)).toBe(3);
    expect(() => read('11')).toThrow('functionsWarmTasks: must be a whole number from 0 to 10');
    expect(() => read('two')).toThrow('functionsWarmTasks: must be a whole number from 0 to 10');
  });
});

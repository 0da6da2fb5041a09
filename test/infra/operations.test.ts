import * as fs from 'node:fs';
import * as path from 'node:path';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../infra/bundling.ts';
import { FUNCTIONS_PER_ALARM, TABLE_OPERATIONS } from '../../infra/operations.ts';
import { type SlipwayStack } from '../../infra/stack.ts';
import { queueAgeAlarmSeconds, runbookAnchors } from '../../lib/operations/signals.ts';
import { queueDefinitions, type QueueName } from '../../lib/resources.ts';
import { synthesizedSlipway } from '../support/slipway-stack.ts';

/**
 * The operations nested stack (infra/operations.ts) against the platform stack it watches: every queue, dead-letter
 * queue and Lambda of the platform template is alarmed, every alarm reaches the topic both ways and says where its
 * runbook entry is, and every Lambda logs to a group with a retention. One synthesis for the file, without bundling.
 */
type Resource = { Type: string; Properties: Record<string, any> };
let outdir: string;
let stack: SlipwayStack;
let platform: Record<string, Resource>;
let operations: Record<string, Resource>;
let nestedTemplateFile: string;
/** The nested stack's parameter name -> the platform's logical id it is taken from. */
let parameterSource: Record<string, string>;

beforeAll(() => {
  let templateFile: string;
  ({ stack, outdir, templateFile } = synthesizedSlipway());
  platform = JSON.parse(fs.readFileSync(templateFile, 'utf8')).Resources;
  // The operations stack; the API's routes are the other nested stack (infra/api.ts).
  const nested = Object.entries(platform)
    .filter(([id, r]) => r.Type === 'AWS::CloudFormation::Stack' && id.startsWith('Operations'))
    .map(([, r]) => r);
  expect(nested).toHaveLength(1);
  nestedTemplateFile = path.join(outdir, fs.readdirSync(outdir).find((f) => /^SlipwayOperations.*\.nested\.template\.json$/.test(f))!);
  operations = JSON.parse(fs.readFileSync(nestedTemplateFile, 'utf8')).Resources;
  parameterSource = {};
  for (const [name, value] of Object.entries<any>(nested[0]!.Properties.Parameters)) {
    parameterSource[name] = value.Ref ?? value['Fn::GetAtt']?.[0];
  }
}, 600_000);

const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const alarms = (): Record<string, any>[] => ofType(operations, 'AWS::CloudWatch::Alarm').map(([id, r]) => ({ id, ...r.Properties }));
/** The MetricStats an alarm evaluates (a plain alarm's own metric as one). */
function metricStats(alarm: Record<string, any>): { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: any }[] }[] {
  if (!alarm.Metrics) return [{ MetricName: alarm.MetricName, Namespace: alarm.Namespace, Dimensions: alarm.Dimensions ?? [] }];
  return alarm.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric);
}
/** The platform resource a dimension names (through the nested stack's parameter). */
const platformIdOf = (value: any) => parameterSource[value?.Ref] ?? null;
const alarmsOn = (metricName: string, dimension: string, logicalId: string) =>
  alarms().filter((a) =>
    metricStats(a).some(
      (m) => m.MetricName === metricName && m.Dimensions.some((d) => d.Name === dimension && platformIdOf(d.Value) === logicalId),
    ),
  );

const docs = () => fs.readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8');
/** GitHub's heading anchors of the runbook. */
const anchors = () =>
  docs()
    .split('\n')
    .filter((line) => /^#{1,4} /.test(line))
    .map((line) =>
      line
        .replace(/^#+ /, '')
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 _-]/g, '')
        .replace(/ /g, '-'),
    );

describe('the alarm topic', () => {
  it('is the action of every alarm, on alarm and on recovery, and mails the alarmEmail context', () => {
    const topics = ofType(operations, 'AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    const topicId = topics[0]![0];
    expect(alarms().length).toBeGreaterThan(0);
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions, alarm.id).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions, alarm.id).toEqual([{ Ref: topicId }]);
    }
    expect(ofType(operations, 'AWS::SNS::Subscription').map(([, r]) => r.Properties)).toEqual([
      { Protocol: 'email', Endpoint: 'oncall@example.test', TopicArn: { Ref: topicId } },
    ]);
  });
});

describe('alarms', () => {
  it('describe what they mean and name an entry of docs/operations.md, and treat missing data deliberately', () => {
    const headings = anchors();
    for (const alarm of alarms()) {
      const link = /Runbook: docs\/operations\.md#([a-z0-9-]+)$/.exec(alarm.AlarmDescription);
      expect(link, alarm.id).not.toBeNull();
      expect(Object.values(runbookAnchors)).toContain(link![1]);
      expect(headings, `${alarm.id} links #${link![1]}`).toContain(link![1]);
      expect(alarm.AlarmDescription.length, alarm.id).toBeGreaterThan(80);
      expect(['breaching', 'notBreaching', 'ignore', 'missing'], alarm.id).toContain(alarm.TreatMissingData);
      expect(alarm.AlarmName, alarm.id).toMatch(/^Slipway-[A-Za-z0-9-]+$/);
    }
  });

  it('watch every dead-letter queue from its first message, and every work queue at the age fitted to it', () => {
    const queues = ofType(platform, 'AWS::SQS::Queue');
    const deadLetterIds = new Set(
      queues.flatMap(([, q]) => (q.Properties.RedrivePolicy ? [q.Properties.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0]] : [])),
    );
    expect(deadLetterIds.size).toBe(Object.keys(queueDefinitions).length);
    for (const [id, queue] of queues) {
      if (deadLetterIds.has(id)) {
        const [alarm, ...more] = alarmsOn('ApproximateNumberOfMessagesVisible', 'QueueName', id);
        expect(more, id).toEqual([]);
        expect([alarm?.Threshold, alarm?.ComparisonOperator, alarm?.TreatMissingData], id).toEqual([
          1,
          'GreaterThanOrEqualToThreshold',
          'notBreaching',
        ]);
      } else {
        expect(queue.Properties.RedrivePolicy, id).toBeDefined();
        const name = (Object.keys(queueDefinitions) as QueueName[]).find((n) => id.startsWith(`State${queueDefinitions[n].id}`))!;
        const [alarm, ...more] = alarmsOn('ApproximateAgeOfOldestMessage', 'QueueName', id);
        expect(more, id).toEqual([]);
        expect([alarm?.Threshold, alarm?.ComparisonOperator], id).toEqual([queueAgeAlarmSeconds[name], 'GreaterThanThreshold']);
        // A work queue's age threshold is above one failed attempt's visibility timeout.
        expect(queueAgeAlarmSeconds[name], name).toBeGreaterThan(queueDefinitions[name].visibilityTimeoutSeconds);
      }
    }
  });

  it("watch every platform Lambda's Errors and Throttles, ten functions at most per alarm, each function named in its description", () => {
    const functions = ofType(platform, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(90);
    for (const metricName of ['Errors', 'Throttles']) {
      for (const [id] of functions) {
        const [alarm, ...more] = alarmsOn(metricName, 'FunctionName', id);
        expect(more, `${metricName} ${id}`).toEqual([]);
        expect(alarm, `${metricName} of ${id}`).toBeDefined();
      }
    }
    const lambdaAlarms = alarms().filter((a) => metricStats(a).some((m) => m.Namespace === 'AWS/Lambda'));
    expect(lambdaAlarms).toHaveLength(2 * Math.ceil(functions.length / FUNCTIONS_PER_ALARM));
    for (const alarm of lambdaAlarms) {
      const stats = metricStats(alarm);
      expect(stats.length).toBeLessThanOrEqual(FUNCTIONS_PER_ALARM);
      // The sum over the group is what alarms; each function is one metric, labelled with its path in the stack.
      const expression = alarm.Metrics.find((m: any) => m.ReturnData !== false && m.Expression);
      expect(expression.Expression).toMatch(/^SUM\(\[FILL\([a-z]\d+_0, 0\)(, FILL\([a-z]\d+_\d, 0\))*\]\)$/);
      for (const m of alarm.Metrics.filter((x: any) => x.MetricStat)) expect(alarm.AlarmDescription).toContain(m.Label);
    }
  });

  it('watch the table, the API 5xx rate and the container door', () => {
    const [[tableId]] = ofType(platform, 'AWS::DynamoDB::Table') as [[string, Resource]];
    for (const metricName of ['ThrottledRequests', 'SystemErrors']) {
      const [alarm, ...more] = alarmsOn(metricName, 'TableName', tableId);
      expect(more).toEqual([]);
      expect(metricStats(alarm!).map((m) => m.Dimensions.find((d) => d.Name === 'Operation')!.Value)).toEqual([...TABLE_OPERATIONS]);
    }
    const [[apiId]] = ofType(platform, 'AWS::ApiGatewayV2::Api') as [[string, Resource]];
    const [api] = alarmsOn('5xx', 'ApiId', apiId);
    expect(api!.Metrics.find((m: any) => m.Expression).Expression).toBe('IF(requests >= 20, 100 * errors / requests, 0)');
    expect([api!.Threshold, api!.TreatMissingData]).toEqual([5, 'notBreaching']);
    const [[serviceId]] = ofType(platform, 'AWS::ECS::Service') as [[string, Resource]];
    // The default shape: one door task on one instance, no load balancer.
    const [door] = alarmsOn('CPUUtilization', 'ServiceName', serviceId);
    expect(door!.Metrics.find((m: any) => m.Expression).Expression).toBe('1 - FILL(running, 0)');
    expect(door!.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Stat)).toEqual(['SampleCount']);
    expect([door!.Threshold, door!.EvaluationPeriods, door!.TreatMissingData]).toEqual([1, 5, 'breaching']);
    const [[instanceId]] = ofType(platform, 'AWS::EC2::Instance').filter(([id]) => id.includes('Door')) as [[string, Resource]];
    const [instance] = alarmsOn('StatusCheckFailed', 'InstanceId', instanceId);
    expect([instance!.Threshold, instance!.EvaluationPeriods, instance!.TreatMissingData]).toEqual([1, 3, 'breaching']);
  });

  it('are what docs/operations.md counts and prices', () => {
    const all = alarms();
    const metrics = all.reduce((sum, a) => sum + metricStats(a).length, 0);
    const text = docs();
    expect(text).toContain(`${all.length} alarms evaluating ${metrics} metrics`);
    expect(text).toContain(`$${(metrics * 0.1).toFixed(2)} a month`);
  });
});

describe('dashboard and logs', () => {
  it('has one dashboard holding every alarm, the API, the queues and the dead letters', () => {
    const dashboards = ofType(operations, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]![1].Properties.DashboardBody);
    for (const title of ['API requests and 5xx', 'Queue depth', 'Oldest message age', 'Dead letters', 'Builds by outcome', 'by status']) {
      expect(body).toContain(title);
    }
  });

  it('gives every log group a retention and every Lambda its own log group of the template', () => {
    const groups = ofType(platform, 'AWS::Logs::LogGroup');
    for (const [id, group] of groups) expect(group.Properties.RetentionInDays, id).toBeGreaterThan(0);
    const groupIds = new Set(groups.map(([id]) => id));
    for (const [id, fn] of ofType(platform, 'AWS::Lambda::Function')) {
      expect(groupIds.has(fn.Properties.LoggingConfig?.LogGroup?.Ref), id).toBe(true);
    }
    // No CDK log-retention custom resource: retention is the groups' own.
    expect(ofType(platform, 'Custom::LogRetention')).toEqual([]);
  });

  it("saves the Logs Insights queries for a request id, a team's errors and a function's invocations", () => {
    const queries = ofType(operations, 'AWS::Logs::QueryDefinition').map(([, r]) => r.Properties);
    expect(queries.map((q) => q.Name).sort()).toEqual(['Slipway/function-invocations', 'Slipway/request-by-id', 'Slipway/team-errors']);
    for (const query of queries) expect(query.LogGroupNames.length).toBeGreaterThan(10);
    const byName = Object.fromEntries(queries.map((q) => [q.Name, q.QueryString as string]));
    expect(byName['Slipway/request-by-id']).toContain('| filter request_id = "REQUEST_ID" or requestId = "REQUEST_ID"');
    expect(byName['Slipway/team-errors']).toContain('| filter team_id = "TEAM_ID" and level = "ERROR"');
    expect(byName['Slipway/function-invocations']).toContain('function_name = "FUNCTION_NAME"');
  });
});

// cfn-lint reads this stack's template with the others of the app (stack.test.ts, 'passes cfn-lint').
describe('compliance of the operations stack', () => {
  it('has no unacknowledged cdk-nag finding', () => {
    const report = new AwsSolutionsChecks().validateScope(stack.operations);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});

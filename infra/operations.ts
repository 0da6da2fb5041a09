import { Duration, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';
import { queueDefinitions, type QueueName } from '../lib/resources.ts';
import { deadLetterAlarmCount, queueAgeAlarmSeconds, runbookLink, type RunbookEntry } from '../lib/operations/signals.ts';

/**
 * Operability: the alarm topic, the alarms, the dashboard and the saved Logs Insights queries, in a nested stack of
 * their own. The platform's stack sits near CloudFormation's 500 resources (96 Lambdas, their routes and roles); a
 * nested stack is one resource there and holds its own 500, and what it names of the platform arrives as its
 * parameters (at most 200; this one takes about 140). Alarm choices and their monthly cost: docs/operations.md.
 */

/** A Lambda of the platform as the alarms name it: its CloudFormation resource and its path in the stack. */
export interface PlatformFunction {
  fn: lambda.CfnFunction;
  /** `Api/GetTeamsByTeamProfile`, `Workers/Builds`: what an operator reads in an alarm. */
  label: string;
}

/** Every Lambda the stack defines (routes, workers, edge handlers, CDK's own), by path: none is left without alarms. */
export function platformFunctions(stack: Stack): PlatformFunction[] {
  return stack.node
    .findAll()
    .filter((c): c is lambda.CfnFunction => c instanceof lambda.CfnFunction && Stack.of(c) === stack)
    .map((fn) => ({ fn, label: functionLabel(stack, fn) }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

function functionLabel(stack: Stack, fn: IConstruct): string {
  const path = fn.node.path.slice(stack.node.path.length + 1);
  return path.replace(/\/Function\/Resource$|\/Resource$/, '');
}

/** The container door's parts the door alarms read; kept apart so a change of the door's shape changes doorAlarms only. */
export interface DoorParts {
  service: ecs.BaseService;
  desiredCount: number;
  /** The default shape (`doorTasks` 0): the one instance the door's VPC origin targets. */
  instance?: ec2.Instance;
  /** With `doorTasks` over 0: the load balancer's target group. */
  targetGroup?: elbv2.ApplicationTargetGroup;
}

export interface SlipwayOperationsProps {
  /** The platform stack's name: alarm names start with it, so two stacks in one account never clash. */
  stackName: string;
  functions: PlatformFunction[];
  queues: Record<QueueName, sqs.IQueue>;
  deadLetterQueues: Record<QueueName, sqs.IQueue>;
  table: dynamodb.Table;
  httpApi: apigwv2.HttpApi;
  door: DoorParts;
  /** Every log group the platform's Lambdas write to, for the saved queries and the dashboard's log widgets. */
  logGroups: logs.ILogGroup[];
  /** The API's access log (its lines carry `requestId`). */
  accessLogGroup?: logs.ILogGroup;
  /** Context `alarmEmail`: an address subscribed to the topic (it confirms by the link AWS mails). */
  alarmEmail?: string;
}

/** Metrics per Lambda alarm: CloudWatch takes at most 10 metrics in an alarm's math expression. */
export const FUNCTIONS_PER_ALARM = 10;

/** The operations the platform runs on the table (lib/ and handlers/ send these commands, nothing else). */
export const TABLE_OPERATIONS = [
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactWriteItems',
] as const;

const FIVE_MINUTES = Duration.minutes(5);

export class SlipwayOperations extends NestedStack {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;
  private readonly action: SnsAction;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: SlipwayOperationsProps,
  ) {
    super(scope, id, { description: 'Slipway operations: alarm topic, alarms, dashboard and saved log queries' });
    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: `${props.stackName} alarms`, enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Alarm notifications carry alarm names, states and metric values, nothing of users; CloudWatch cannot publish to a topic under ' +
        'the AWS-managed SNS key, and a customer-managed key would add $1 a month for no secret to keep.',
    });
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    this.action = new SnsAction(this.topic);

    const deadLetterAlarms = this.queueAlarms();
    const lambdaAlarms = this.lambdaAlarms();
    this.tableAlarms();
    this.apiAlarm();
    doorAlarms(this, props.door);
    this.dashboard = this.makeDashboard(deadLetterAlarms, lambdaAlarms);
    this.savedQueries();
  }

  /** One alarm, with both actions on the topic, named after the stack. */
  alarm(
    id: string,
    name: string,
    entry: RunbookEntry,
    description: string,
    props: Omit<cloudwatch.AlarmProps, 'alarmName' | 'alarmDescription'>,
  ) {
    const text = `${description} ${runbookLink(entry)}`;
    if (text.length > 1024) throw new Error(`The description of alarm ${name} is over CloudWatch's 1024 characters`);
    const alarm = new cloudwatch.Alarm(this, id, { ...props, alarmName: `${this.props.stackName}-${name}`, alarmDescription: text });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.push(alarm);
    return alarm;
  }

  private queueAlarms() {
    const deadLetters: cloudwatch.IMetric[] = [];
    for (const name of Object.keys(queueDefinitions) as QueueName[]) {
      const queue = this.props.queues[name];
      const dlq = this.props.deadLetterQueues[name];
      const visible = dlq.metricApproximateNumberOfMessagesVisible({
        period: FIVE_MINUTES,
        statistic: 'Maximum',
        label: `${name} dead letters`,
      });
      deadLetters.push(visible);
      this.alarm(
        `${queueDefinitions[name].id}DeadLetters`,
        `dead-letters-${name}`,
        'deadLetters',
        `Messages of the ${name} queue are in its dead-letter queue: work the ${name} worker failed ${queueDefinitions[name].maxReceiveCount} times and gave up on.`,
        {
          metric: visible,
          threshold: deadLetterAlarmCount,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          // SQS stops reporting a queue that is empty and idle: no data is an empty dead-letter queue.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        },
      );
      const limit = queueAgeAlarmSeconds[name];
      this.alarm(
        `${queueDefinitions[name].id}Age`,
        `queue-age-${name}`,
        'queueAge',
        `The oldest message of the ${name} queue is over ${limit} s old: its worker is failing, stopped or not keeping up.`,
        {
          metric: queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
          threshold: limit,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          // An empty, idle queue reports nothing: nothing is waiting.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        },
      );
    }
    return deadLetters;
  }

  /**
   * Errors and Throttles of every platform Lambda, ten functions per alarm (metric math: the sum over the group, each
   * function one named metric). One alarm per function would be 2 alarms x 96 functions, more resources than this
   * nested stack should hold; the cost is the same either way (CloudWatch bills each metric an alarm evaluates).
   */
  private lambdaAlarms() {
    const groups: PlatformFunction[][] = [];
    for (let i = 0; i < this.props.functions.length; i += FUNCTIONS_PER_ALARM)
      groups.push(this.props.functions.slice(i, i + FUNCTIONS_PER_ALARM));
    const errorSums: cloudwatch.IMetric[] = [];
    groups.forEach((group, index) => {
      const number = String(index + 1).padStart(2, '0');
      const names = group.map((f) => f.label).join(', ');
      for (const [metricName, entry, threshold, what] of [
        ['Errors', 'lambdaErrors', 3, 'failed (an unhandled error or a timeout)'],
        ['Throttles', 'lambdaThrottles', 1, 'was throttled (the account or function concurrency is used up)'],
      ] as const) {
        const sum = groupSum(group, metricName, `${metricName} of Lambdas ${number}`, `${metricName[0]!.toLowerCase()}${index}_`);
        if (metricName === 'Errors') errorSums.push(sum);
        this.alarm(
          `Lambda${metricName}${number}`,
          `lambda-${metricName.toLowerCase()}-${number}`,
          entry,
          `A platform Lambda ${what} ${threshold === 1 ? 'at least once' : `${threshold} times or more`} in 5 minutes, one of: ${names}.`,
          {
            metric: sum,
            threshold,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            // A function not called reports nothing: no calls, no errors.
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          },
        );
      }
    });
    return errorSums;
  }

  private tableAlarms() {
    const table = this.props.table;
    const operations = [...TABLE_OPERATIONS];
    const common = {
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // DynamoDB reports these only when they happen.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    };
    this.alarm(
      'TableThrottles',
      'table-throttled-requests',
      'table',
      `The table throttled requests in 5 minutes (${operations.join(', ')}): on demand, that is a hot key or a table-level limit.`,
      { ...common, metric: table.metricThrottledRequestsForOperations({ operations: operations as never, period: FIVE_MINUTES }) },
    );
    this.alarm(
      'TableSystemErrors',
      'table-system-errors',
      'table',
      `DynamoDB answered requests to the table with a 500 in 5 minutes (${operations.join(', ')}): an AWS-side fault.`,
      { ...common, metric: table.metricSystemErrorsForOperations({ operations: operations as never, period: FIVE_MINUTES }) },
    );
  }

  private apiAlarm() {
    const api = this.props.httpApi;
    const requests = api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const errors = api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    this.alarm(
      'Api5xxRate',
      'api-5xx-rate',
      'api5xx',
      'Over 5% of the HTTP API requests in 5 minutes (of at least 20) were answered 5xx: a failing route, an integration fault or an overloaded dependency.',
      {
        // Below 20 requests a single failure is no rate; the Lambda errors alarms still see it.
        metric: new cloudwatch.MathExpression({
          expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
          usingMetrics: { requests, errors },
          period: FIVE_MINUTES,
          label: 'API 5xx %',
        }),
        threshold: 5,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        // No requests: nothing failed.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      },
    );
  }

  private makeDashboard(deadLetters: cloudwatch.IMetric[], errorSums: cloudwatch.IMetric[]) {
    const { httpApi, queues, functions } = this.props;
    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${this.props.stackName}-operations`,
      defaultInterval: Duration.hours(3),
    });
    const busiest = functions.filter((f) => BUSIEST_HANDLERS.some((pattern) => pattern.test(f.label)));
    const names = Object.keys(queueDefinitions) as QueueName[];
    dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }),
      new cloudwatch.GraphWidget({
        title: 'API requests and 5xx',
        left: [httpApi.metricCount({ period: FIVE_MINUTES, statistic: 'Sum', label: 'requests' })],
        right: [httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum', label: '5xx' })],
        width: 12,
      }),
      new cloudwatch.GraphWidget({ title: 'Lambda errors (per alarm group)', left: errorSums, width: 12 }),
      new cloudwatch.GraphWidget({
        title: 'Errors of the busiest handlers',
        left: busiest.map((f) => functionMetric(f, 'Errors', 'Sum')),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Duration p99 of the busiest handlers (ms)',
        left: busiest.map((f) => functionMetric(f, 'Duration', 'p99')),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Queue depth (visible messages)',
        left: names.map((name) =>
          queues[name].metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum', label: name }),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Oldest message age (s)',
        left: names.map((name) =>
          queues[name].metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum', label: name }),
        ),
        width: 8,
      }),
      new cloudwatch.GraphWidget({ title: 'Dead letters', left: deadLetters, width: 8 }),
      new cloudwatch.LogQueryWidget({
        title: 'Queued invocations started and ended, by status',
        logGroupNames: this.props.logGroups.map((group) => group.logGroupName),
        queryLines: ['filter message = "invocation started" or message = "invocation ended"', 'stats count(*) by message, status, bin(1h)'],
        width: 12,
      }),
      new cloudwatch.LogQueryWidget({
        title: 'Builds by outcome',
        logGroupNames: this.props.logGroups.map((group) => group.logGroupName),
        queryLines: ['filter message = "build ended"', 'stats count(*) by status, bin(1h)'],
        width: 12,
      }),
    );
    return dashboard;
  }

  /** Logs Insights queries an operator runs from the console, over every platform log group; replace the placeholder. */
  private savedQueries() {
    const logGroups = [...this.props.logGroups, ...(this.props.accessLogGroup ? [this.props.accessLogGroup] : [])];
    const saved = (id: string, name: string, filter: string, sort: string) =>
      new logs.QueryDefinition(this, id, {
        queryDefinitionName: `${this.props.stackName}/${name}`,
        queryString: new logs.QueryString({ fields: ['@timestamp', '@log', 'level', 'message'], filterStatements: [filter], sort }),
        logGroups,
      });
    // The platform's lines carry request_id (lib/logger.ts); the API access log carries requestId.
    saved('RequestQuery', 'request-by-id', 'request_id = "REQUEST_ID" or requestId = "REQUEST_ID"', '@timestamp asc');
    // team_id: the pipeline adds it to a request's lines once the caller's team is known (lib/http/pipeline.ts).
    saved('TeamErrorsQuery', 'team-errors', 'team_id = "TEAM_ID" and level = "ERROR"', '@timestamp desc');
    // The invocation records log each start and end with the function's names (lib/functions/invocation-records.ts).
    saved(
      'FunctionInvocationsQuery',
      'function-invocations',
      'project_id = "PROJECT_ID" and function_name = "FUNCTION_NAME" and message like /^invocation /',
      '@timestamp desc',
    );
  }
}

/** The handlers the dashboard graphs one by one: the doors, the serving path, the queued work and the deploy path. */
const BUSIEST_HANDLERS = [
  /^Functions\/Router$/,
  /^Sites\/ServeSite$/,
  /^Workers\/FunctionInvocations$/,
  /^Workers\/Builds$/,
  /^Api\/Fallback$/,
  /^Api\/PostUploads$/,
  /^Api\/PutUploadsByUploadIdFilesByHash$/,
  /^Api\/PostUploadsByUploadIdFinalize$/,
];

function functionMetric(f: PlatformFunction, metricName: string, statistic: string, period = FIVE_MINUTES) {
  return new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName,
    dimensionsMap: { FunctionName: f.fn.ref },
    statistic,
    period,
    label: f.label,
  });
}

/**
 * The sum of one Lambda metric over a group of at most 10 functions, each named by its label; a silent one counts 0.
 * Ids unique across groups (`e3_4`): the dashboard graphs the groups' sums together.
 */
function groupSum(group: PlatformFunction[], metricName: string, label: string, idPrefix: string): cloudwatch.MathExpression {
  if (group.length > FUNCTIONS_PER_ALARM) throw new Error(`An alarm evaluates at most ${FUNCTIONS_PER_ALARM} metrics`);
  const usingMetrics = Object.fromEntries(group.map((f, i) => [`${idPrefix}${i}`, functionMetric(f, metricName, 'Sum')]));
  return new cloudwatch.MathExpression({
    expression: `SUM([${Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(', ')}])`,
    usingMetrics,
    period: FIVE_MINUTES,
    label,
  });
}

/**
 * The container door's alarms: fewer running tasks than desired (Container Insights of the door's cluster), and a
 * load balancer target failing its health check. One function, so that a change of the door's shape (no load
 * balancer, other task counts) changes only this.
 */
export function doorAlarms(operations: SlipwayOperations, door: DoorParts): cloudwatch.Alarm[] {
  // The service's CPUUtilization is reported each minute by every running task, free and in either shape (Container
  // Insights, which would give RunningTaskCount, is billed as custom metrics and is off in the default shape): its
  // SampleCount is the number of tasks running.
  const running = door.service.metricCpuUtilization({ statistic: 'SampleCount', period: Duration.minutes(1), label: 'door tasks running' });
  const alarms = [
    operations.alarm(
      'DoorTasksBelowDesired',
      'door-tasks-below-desired',
      'door',
      `The container door runs fewer tasks than desired (${door.desiredCount}) for 5 minutes: tasks fail to start or keep stopping, and large or chunked function requests may fail.`,
      {
        metric: new cloudwatch.MathExpression({
          expression: `${door.desiredCount} - FILL(running, 0)`,
          usingMetrics: { running },
          period: Duration.minutes(1),
          label: 'door tasks missing',
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 5,
        // Running tasks report every minute: silence means the door is not running at all.
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      },
    ),
  ];
  if (door.instance) {
    alarms.push(
      operations.alarm(
        'DoorInstanceStatusCheck',
        'door-instance-status-check',
        'door',
        "The container door's instance fails its EC2 status checks for 3 minutes: large or chunked function requests fail until automatic recovery or a reboot brings it back.",
        {
          metric: new cloudwatch.Metric({
            namespace: 'AWS/EC2',
            metricName: 'StatusCheckFailed',
            dimensionsMap: { InstanceId: door.instance.instanceId },
            statistic: 'Maximum',
            period: Duration.minutes(1),
          }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 3,
          // Status checks are reported each minute (basic monitoring, free) while the instance runs.
          treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        },
      ),
    );
  }
  if (door.targetGroup) {
    alarms.push(
      operations.alarm(
        'DoorUnhealthyTargets',
        'door-unhealthy-targets',
        'door',
        'A container door task behind the load balancer has failed its health check (GET /health) for 3 minutes.',
        {
          metric: door.targetGroup.metrics.unhealthyHostCount({ period: Duration.minutes(1), statistic: 'Maximum' }),
          threshold: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 3,
          // The load balancer reports every minute; no data is no load balancer, which the tasks alarm covers.
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        },
      ),
    );
  }
  return alarms;
}

/** What the operations stack watches, found in the platform's constructs (structural, so this file needs no import of the stack). */
export function operationsProps(
  stack: Stack,
  parts: {
    state: { table: dynamodb.Table; queues: Record<QueueName, sqs.IQueue>; deadLetterQueues: Record<QueueName, sqs.IQueue> };
    api: { httpApi: apigwv2.HttpApi; node: Construct['node'] };
    door: { service: ecs.BaseService; instance?: ec2.Instance; targetGroup?: elbv2.ApplicationTargetGroup; scope: Construct };
    alarmEmail?: unknown;
  },
): SlipwayOperationsProps {
  const functions = platformFunctions(stack);
  // The log groups the Lambdas write to (the routes share one), and the container door's, which runs the router's code.
  const logGroups = new Set<logs.ILogGroup>();
  for (const c of stack.node.findAll()) if (c instanceof lambda.Function && c.logGroup instanceof logs.LogGroup) logGroups.add(c.logGroup);
  for (const c of parts.door.scope.node.findAll()) if (c instanceof logs.LogGroup && c.node.id === 'DoorLogs') logGroups.add(c);
  const email = typeof parts.alarmEmail === 'string' && parts.alarmEmail.trim() !== '' ? parts.alarmEmail.trim() : undefined;
  if (email && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new Error(`alarmEmail: "${email}" is not an e-mail address`);
  return {
    stackName: stack.stackName,
    functions,
    queues: parts.state.queues,
    deadLetterQueues: parts.state.deadLetterQueues,
    table: parts.state.table,
    httpApi: parts.api.httpApi,
    door: {
      service: parts.door.service,
      desiredCount: Number((parts.door.service.node.defaultChild as ecs.CfnService).desiredCount ?? 1),
      instance: parts.door.instance,
      targetGroup: parts.door.targetGroup,
    },
    logGroups: [...logGroups],
    accessLogGroup: parts.api.node.tryFindChild('AccessLogs') as logs.LogGroup | undefined,
    alarmEmail: email,
  };
}

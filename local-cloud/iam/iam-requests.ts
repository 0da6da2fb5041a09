/**
 * What IAM authorizes for one AWS request: its action(s), resource ARN(s) and
 * the condition keys the request carries, mapped from the wire request as the
 * service would (JSON protocols by X-Amz-Target, REST protocols by method and
 * path). A request no rule maps is reported as unmapped, and refused: the
 * synthesized mode never lets a call through unchecked.
 */

export interface AuthorizationCheck {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
  /** Alternatives: the request is allowed when any of them is (SES: the address or its domain identity). */
  anyOf?: AuthorizationCheck[];
}

export interface WireRequest {
  service: string;
  method: string;
  /** Path and query, as received. */
  url: URL;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface ArnContext {
  region: string;
  accountId: string;
  /** The partition key attribute of each table, by table name (for dynamodb:LeadingKeys). */
  tableHashKey(table: string): string | undefined;
  /** The VPC of a subnet (for lambda:VpcIds). */
  subnetVpc(subnet: string): string | undefined;
  /** The roles a task definition passes to ECS (its task and execution roles), for RunTask's iam:PassRole. */
  taskDefinitionRoles?(taskDefinition: string): string[];
}

export class UnmappedRequestError extends Error {}

const header = (request: WireRequest, name: string) => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function jsonBody(request: WireRequest): any {
  try {
    return request.body.length ? JSON.parse(request.body.toString('utf8')) : {};
  } catch {
    return {};
  }
}

function leadingKey(item: any, table: string, ctx: ArnContext): Record<string, string[]> {
  const hashKey = ctx.tableHashKey(table);
  const value = hashKey ? item?.[hashKey] : undefined;
  const text = value?.S ?? value?.N;
  return text === undefined ? {} : { 'dynamodb:LeadingKeys': [String(text)] };
}

function dynamodbChecks(operation: string, body: any, ctx: ArnContext): AuthorizationCheck[] {
  const table = (name: string) => `arn:aws:dynamodb:${ctx.region}:${ctx.accountId}:table/${name}`;
  const item = (action: string, entry: any) => ({
    action: `dynamodb:${action}`,
    resource: table(entry.TableName),
    context: leadingKey(entry.Key ?? entry.Item, entry.TableName, ctx),
  });
  switch (operation) {
    case 'TransactWriteItems':
      return (body.TransactItems ?? []).map((entry: any) => {
        const [kind, detail] = Object.entries(entry)[0] as [string, any];
        const action = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' }[kind] ?? kind;
        return item(action, detail);
      });
    case 'TransactGetItems':
      return (body.TransactItems ?? []).map((entry: any) => item('GetItem', entry.Get));
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys(body.RequestItems ?? {}).map((name) => ({ action: `dynamodb:${operation}`, resource: table(name) }));
    case 'Query':
    case 'Scan':
      return [
        {
          action: `dynamodb:${operation}`,
          resource: body.IndexName ? `${table(body.TableName)}/index/${body.IndexName}` : table(body.TableName),
        },
      ];
    default:
      if (!body.TableName) throw new UnmappedRequestError(`dynamodb ${operation} names no table`);
      return [item(operation, body)];
  }
}

function sqsChecks(operation: string, body: any, ctx: ArnContext): AuthorizationCheck[] {
  // ListQueues names no queue: IAM takes it on every resource.
  if (operation === 'ListQueues') return [{ action: 'sqs:ListQueues', resource: '*' }];
  const name =
    body.QueueName ??
    String(body.QueueUrl ?? '')
      .split('/')
      .pop();
  if (!name) throw new UnmappedRequestError(`sqs ${operation} names no queue`);
  const action = operation.replace(/Batch$/, '');
  return [{ action: `sqs:${action}`, resource: `arn:aws:sqs:${ctx.region}:${ctx.accountId}:${name}` }];
}

function ecsChecks(operation: string, body: any, ctx: ArnContext): AuthorizationCheck[] {
  const cluster = String(body.cluster ?? 'default');
  const clusterArn = cluster.startsWith('arn:') ? cluster : `arn:aws:ecs:${ctx.region}:${ctx.accountId}:cluster/${cluster}`;
  const context = { 'ecs:cluster': clusterArn };
  switch (operation) {
    case 'RunTask':
      // ECS passes the task definition's roles on the caller's behalf, as AWS checks at RunTask.
      return [
        { action: 'ecs:RunTask', resource: String(body.taskDefinition), context },
        ...(ctx.taskDefinitionRoles?.(String(body.taskDefinition)) ?? []).map((role) => ({
          action: 'iam:PassRole',
          resource: role,
          context: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' },
        })),
      ];
    case 'DescribeTasks':
      return (body.tasks ?? []).map((task: string) => ({ action: 'ecs:DescribeTasks', resource: task, context }));
    case 'StopTask':
      return [{ action: 'ecs:StopTask', resource: String(body.task), context }];
    default:
      throw new UnmappedRequestError(`ecs ${operation} is not mapped`);
  }
}

/** JSON protocols: the operation is the X-Amz-Target's suffix. */
export function jsonProtocolChecks(request: WireRequest, ctx: ArnContext): AuthorizationCheck[] | null {
  const target = header(request, 'x-amz-target');
  if (!target) return null;
  const operation = target.slice(target.lastIndexOf('.') + 1);
  const body = jsonBody(request);
  switch (request.service) {
    case 'dynamodb':
      return dynamodbChecks(operation, body, ctx);
    case 'sqs':
      return sqsChecks(operation, body, ctx);
    case 'secretsmanager':
      return [{ action: `secretsmanager:${operation}`, resource: String(body.SecretId) }];
    case 'ecs':
      return ecsChecks(operation, body, ctx);
    case 'acm':
      return operation === 'RequestCertificate' || operation === 'ListCertificates'
        ? [{ action: `acm:${operation}`, resource: '*' }]
        : [{ action: `acm:${operation}`, resource: String(body.CertificateArn) }];
    default:
      throw new UnmappedRequestError(`${request.service} ${operation} is not mapped`);
  }
}

/** The SQS query protocol (form bodies with Action=...), for clients that still speak it. */
export function queryProtocolChecks(request: WireRequest, ctx: ArnContext): AuthorizationCheck[] | null {
  if (request.service !== 'sqs' || !String(header(request, 'content-type') ?? '').includes('x-www-form-urlencoded')) return null;
  const form = new URLSearchParams(request.body.toString('utf8'));
  const operation = form.get('Action');
  if (!operation) return null;
  return sqsChecks(operation, { QueueUrl: form.get('QueueUrl'), QueueName: form.get('QueueName') }, ctx);
}

export { jsonBody, header };

import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { grantedActions, type RolePolicies } from './iam-policies.ts';
import { restProtocolChecks } from './iam-requests-rest.ts';
import {
  jsonProtocolChecks,
  queryProtocolChecks,
  UnmappedRequestError,
  type ArnContext,
  type AuthorizationCheck,
  type WireRequest,
} from './iam-requests.ts';

/** The caller behind one access key: a Lambda of the template and its role. */
export interface LambdaPrincipal {
  functionName: string;
  role: RolePolicies;
}

export interface Denial {
  functionName: string;
  action: string;
  resource: string;
  message: string;
}

/** Per Lambda: what it called (allowed), what was refused, and the grants of its role it never used. */
export interface PermissionUsage {
  functionName: string;
  roleName: string;
  actionsUsed: string[];
  grantsUnused: string[];
  denied: Denial[];
}

export interface IamProxy {
  endpoint: string;
  usage(): PermissionUsage[];
  stop(): Promise<void>;
}

/** The simulator's answer, and the resource it was evaluated against ("*" for an action with no resource type). */
interface Decision {
  allowed: boolean;
  explicit: boolean;
  resource: string;
}

/** The access key id and the signing service of a SigV4 request (header or presigned query). */
export function signingOf(req: Pick<IncomingMessage, 'headers'>, url: URL): { accessKeyId: string; service: string } | null {
  const authorization = String(req.headers.authorization ?? '');
  const credential = /Credential=([^,\s]+)/.exec(authorization)?.[1] ?? url.searchParams.get('X-Amz-Credential');
  if (!credential) return null;
  const [accessKeyId, , , service] = credential.split('/');
  return accessKeyId && service ? { accessKeyId, service } : null;
}

function denialBody(request: WireRequest, message: string): { status: number; headers: Record<string, string>; body: string } {
  const requestId = randomUUID();
  if (request.headers['x-amz-target']) {
    const queryError: Record<string, string> = request.service === 'sqs' ? { 'x-amzn-query-error': 'AccessDenied;Sender' } : {};
    return {
      status: 400,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId, ...queryError },
      body: JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', Message: message, message }),
    };
  }
  if (request.service === 's3') {
    return {
      status: 403,
      headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId },
      body:
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>` +
        `<Message>${escapeXml(message)}</Message><RequestId>${requestId}</RequestId></Error>`,
    };
  }
  if (['route53', 'cloudfront', 'sqs'].includes(request.service)) {
    return {
      status: 403,
      headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
      body:
        `<?xml version="1.0"?>\n<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>` +
        `<Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    };
  }
  return {
    status: 403,
    headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException', 'x-amzn-requestid': requestId },
    body: JSON.stringify({ Message: message, message }),
  };
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The IAM simulator's decision for one request of a Lambda's role (identity policies and permissions boundary). */
async function simulate(accountId: string, principal: LambdaPrincipal, check: AuthorizationCheck, resource: string): Promise<Decision> {
  const boundary = principal.role.permissionBoundaryPolicies;
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:sts::${accountId}:assumed-role/${principal.role.roleName}/${principal.functionName}`,
        action: check.action,
        resource: { resource, accountId: accountId },
        contextVariables: check.context ?? {},
      },
      identityPolicies: principal.role.identityPolicies,
      permissionBoundaryPolicies: boundary.length ? boundary : undefined,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error') {
    // An action with no resource type (CloudFront CreateDistribution, say) is authorized against "*" only:
    // a statement naming ARNs does not allow it, as in AWS.
    if (resource !== '*' && JSON.stringify(result.errors).includes('must.use.wildcard')) return simulate(accountId, principal, check, '*');
    throw new Error(`IAM simulation of ${check.action} failed: ${JSON.stringify(result.errors)}`);
  }
  return { allowed: result.overallResult === 'Allowed', explicit: result.overallResult === 'ExplicitlyDenied', resource };
}

/** Passes an allowed request on to the AWS endpoint, as it came. */
function forward(target: URL, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
    (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  upstream.end(body);
}

/** What a request is checked as: the IAM actions, resources and condition keys of its protocol's mapping. */
function checksOf(request: WireRequest, arns: ArnContext): AuthorizationCheck[] {
  return queryProtocolChecks(request, arns) ?? jsonProtocolChecks(request, arns) ?? restProtocolChecks(request, arns);
}

/** AWS's sentence for a refused check, naming the role session, the action and the resource. */
function refusalMessage(accountId: string, principal: LambdaPrincipal, check: AuthorizationCheck, results: Decision[]): string {
  const why = results.some((result) => result.explicit)
    ? 'with an explicit deny in an identity-based policy or permissions boundary'
    : `because no identity-based policy allows the ${check.action} action`;
  const session = `arn:aws:sts::${accountId}:assumed-role/${principal.role.roleName}/${principal.functionName}`;
  return `User: ${session} is not authorized to perform: ${check.action} on resource: ${results[0]!.resource} ${why}`;
}

/**
 * The proxy's decisions and what it saw: each decision simulated once per role, action, resource and context,
 * the actions each principal was allowed, and every refusal (the permission report).
 */
function createAuthorizer(arns: ArnContext) {
  const decisions = new Map<string, Promise<Decision>>();
  const used = new Map<string, Set<string>>();
  const denied: Denial[] = [];

  const decide = (principal: LambdaPrincipal, check: AuthorizationCheck) => {
    const key = JSON.stringify([principal.role.roleLogicalId, check.action, check.resource, check.context ?? {}]);
    let decision = decisions.get(key);
    if (!decision) {
      decision = simulate(arns.accountId, principal, check, check.resource);
      decisions.set(key, decision);
    }
    return decision;
  };

  /** null when every check of the request is allowed; else the refusal's message (recorded). */
  async function authorize(principal: LambdaPrincipal, request: WireRequest): Promise<string | null> {
    let checks: AuthorizationCheck[];
    try {
      checks = checksOf(request, arns);
    } catch (error) {
      if (!(error instanceof UnmappedRequestError)) throw error;
      const message =
        `User: ${principal.role.roleArn} is not authorized: ` + `the local platform maps no IAM action for this request (${error.message})`;
      denied.push({ functionName: principal.functionName, action: 'unmapped', resource: request.url.pathname, message });
      return message;
    }
    for (const check of checks) {
      const alternatives = check.anyOf ?? [check];
      const results = await Promise.all(alternatives.map((alternative) => decide(principal, alternative)));
      if (results.some((result) => result.allowed)) {
        const actions = used.get(principal.functionName) ?? new Set<string>();
        actions.add(check.action);
        used.set(principal.functionName, actions);
        continue;
      }
      const message = refusalMessage(arns.accountId, principal, check, results);
      denied.push({ functionName: principal.functionName, action: check.action, resource: results[0]!.resource, message });
      return message;
    }
    return null;
  }

  function usage(principals: Iterable<LambdaPrincipal>): PermissionUsage[] {
    return [...principals].map((principal) => {
      const actions = used.get(principal.functionName) ?? new Set<string>();
      return {
        functionName: principal.functionName,
        roleName: principal.role.roleName,
        actionsUsed: [...actions].sort(),
        grantsUnused: grantedActions(principal.role).filter((action) => !actions.has(action)),
        denied: denied.filter((denial) => denial.functionName === principal.functionName),
      };
    });
  }

  return { authorize, usage };
}

interface IamProxyOptions {
  target: string;
  principals: Map<string, LambdaPrincipal>;
  arns: ArnContext;
  /**
   * Services the platform plays itself, by signing name: a Lambda's allowed call to one goes there instead
   * of the AWS endpoint (the Lambdas the functions router makes: lambda-service.ts).
   */
  services?: Record<string, (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>>;
}

/**
 * One request: known by its signing key, checked against that principal's role (a refusal answered as AWS
 * answers it), then handed to the service the platform plays, or forwarded to the AWS endpoint.
 */
async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  options: IamProxyOptions,
  authorize: ReturnType<typeof createAuthorizer>['authorize'],
): Promise<void> {
  const body = await readBody(req);
  const url = new URL(req.url ?? '/', 'http://proxy');
  const signing = signingOf(req, url);
  const principal = signing ? options.principals.get(signing.accessKeyId) : undefined;
  if (principal && signing) {
    const request: WireRequest = { service: signing.service, method: (req.method ?? 'GET').toUpperCase(), url, headers: req.headers, body };
    const refusal = await authorize(principal, request);
    if (refusal) {
      const denial = denialBody(request, refusal);
      res.writeHead(denial.status, { ...denial.headers, 'content-length': String(Buffer.byteLength(denial.body)) });
      return void res.end(request.method === 'HEAD' ? undefined : denial.body);
    }
  }
  // A service the proxy stands in for answers every signed caller (a test reads the Lambdas the router made):
  // the endpoint's own would not know them.
  const service = signing ? options.services?.[signing.service] : undefined;
  if (service) return service(req, res, body);
  forward(new URL(options.target), req, res, body);
}

/**
 * The AWS endpoint every Lambda of the synthesized mode calls: it knows the
 * caller by the access key its credentials carry (one per Lambda), maps the
 * request to its IAM action and resource, evaluates the Lambda's role with
 * the IAM simulator (identity policies and permissions boundary, resource
 * ARNs and conditions), and forwards what is allowed to the AWS endpoint.
 * A refused request gets AWS's AccessDenied answer for its protocol.
 * Requests signed with any other key (the platform itself, tests) pass.
 */
export async function startIamProxy(options: IamProxyOptions): Promise<IamProxy> {
  const authorizer = createAuthorizer(options.arns);
  const server = createServer((req, res) => {
    answer(req, res, options, authorizer.authorize).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`IAM proxy: ${(error as Error).message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    usage: () => authorizer.usage(options.principals.values()),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

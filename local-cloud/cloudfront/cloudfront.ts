import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Script, createContext } from 'node:vm';
import { logger } from '../../lib/logger.ts';
import type { StreamedReply, LambdaFunctionHost } from '../lambda/lambda-host.ts';
import type { ContainerInstances } from '../ecs/container-instances.ts';
import type { LocalLoadBalancers } from '../load-balancers/load-balancers.ts';
import { forwardToVpcOrigin, plainReply } from './vpc-origin.ts';
import { INVOKE_PAYLOAD_LIMIT_BYTES } from '../lambda/lambda-service.ts';
import { constructPath, resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';

interface CloudFrontValue {
  value: string;
}
interface ViewerRequest {
  method: string;
  uri: string;
  querystring: Record<string, CloudFrontValue>;
  headers: Record<string, CloudFrontValue>;
  cookies: Record<string, CloudFrontValue>;
}

/** A reply the viewer function makes itself; its body is a string or `{ encoding: 'text' | 'base64', data }`. */
export interface ViewerReply {
  statusCode: number;
  headers?: Record<string, CloudFrontValue>;
  body?: string | { encoding?: 'text' | 'base64'; data: string };
}

export type ViewerFunction = (request: ViewerRequest, viewerIp: string) => ViewerRequest | ViewerReply;

/** The bytes of a reply the viewer function made. */
function viewerReplyBody(reply: ViewerReply): Buffer {
  if (reply.body === undefined) return Buffer.alloc(0);
  if (typeof reply.body === 'string') return Buffer.from(reply.body);
  return Buffer.from(reply.body.data, reply.body.encoding === 'base64' ? 'base64' : 'utf8');
}

/** The origin a viewer function chose with `cf.selectRequestOriginById`, by the request it returned. */
const selectedOrigins = new WeakMap<object, string>();

/** The origin id the viewer function selected for this request, or null for the behavior's own origin. */
export const selectedOriginOf = (result: ViewerRequest | ViewerReply): string | null => selectedOrigins.get(result) ?? null;

/** The function's `import cf from 'cloudfront';` as a script can have it: the module object of this stand-in. */
const CLOUDFRONT_IMPORT = /^\s*import\s+([A-Za-z_$][\w$]*)\s+from\s+['"]cloudfront['"];?/m;

/**
 * A cloudfront-js-2.0 function of the template, run in its own VM context on each viewer request. Its
 * `cloudfront` module offers `selectRequestOriginById`; an id that is not one of `originIds` (the distribution's
 * origins) throws, as CloudFront fails the function (the viewer gets 503). Without `originIds` any id is taken.
 */
export function compileViewerFunction(code: string, originIds?: string[]): ViewerFunction {
  let selected: string | null = null;
  const cloudfront = {
    selectRequestOriginById(id: unknown) {
      if (typeof id !== 'string' || (originIds && !originIds.includes(id)))
        throw new Error(`selectRequestOriginById: ${JSON.stringify(id)} is not an origin of this distribution`);
      selected = id;
    },
  };
  const context = createContext({ __cloudfront: cloudfront });
  const script = code.replace(CLOUDFRONT_IMPORT, (_, name: string) => `const ${name} = globalThis.__cloudfront;`);
  new Script(`${script}\n;globalThis.__handler = handler;`).runInContext(context, { timeout: 1000 });
  const handler = (context as { __handler: (event: unknown) => any }).__handler;
  return (request, viewerIp) => {
    selected = null;
    const result = handler({
      version: '1.0',
      context: { eventType: 'viewer-request' },
      viewer: { ip: viewerIp },
      request: JSON.parse(JSON.stringify(request)),
    });
    if (selected !== null && result && typeof result === 'object') selectedOrigins.set(result, selected);
    return result;
  };
}

/** An origin of the distribution that is an AWS::CloudFront::VpcOrigin: the load balancer's listener, or the EC2 instance, behind it. */
export interface VpcOrigin {
  target: { kind: 'load-balancer' | 'instance'; logicalId: string };
  /** The VPC origin's HTTPPort (its OriginProtocolPolicy must be http-only here). */
  port: number;
  readTimeoutMs: number;
}

/** An origin of the distribution that is a Lambda function URL, and what reaching it takes. */
export interface FunctionUrlOrigin {
  functionLogicalId: string;
  /** The function URL's AuthType: AWS_IAM refuses a request CloudFront did not sign. */
  authType: 'AWS_IAM' | 'NONE';
  /** An origin access control of type lambda signs the origin request (SigV4), the payload hash being the viewer's. */
  signed: boolean;
  /** The origin's OriginCustomHeaders as the template gives them (intrinsics, dynamic references). */
  customHeaders: { name: string; value: unknown }[];
  /** The same, resolved when the platform starts (resolveOriginHeaders): what CloudFront sends. */
  headers: Record<string, string>;
}

/** A distribution of the template: its viewer-request function and the Lambda behind its function URL origin. */
export interface TemplateDistribution {
  path: string;
  viewerRequest: ViewerFunction | null;
  /** The default behavior's AllowedMethods: CloudFront answers 403 to any other method before its viewer function. */
  allowedMethods: string[];
  originFunctionLogicalId: string;
  /** The id of the default behavior's origin (the function URL). */
  defaultOriginId: string;
  /** The origins that are Lambda function URLs, the default one included, by id. */
  functionUrlOrigins: Map<string, FunctionUrlOrigin>;
  /** The origins a viewer function may select by id that are VPC origins. */
  vpcOrigins: Map<string, VpcOrigin>;
  /** Viewer headers the origin receives (the cache policy's list), or every one but Host. */
  forwardedHeaders: string[] | 'all-except-host';
}

const getAttOf = (value: unknown): string | null => {
  const found = JSON.stringify(value ?? null).match(/"Fn::GetAtt":\["([^"]+)"/);
  return found ? found[1]! : null;
};

/**
 * The distributions whose default origin is a Lambda function URL. One with a
 * bucket origin (the console's: the built dashboard, /api/* to the HTTP API) is
 * left to the platform's console host, which serves the same files and API.
 */
export function templateDistributions(template: SynthesizedTemplate): TemplateDistribution[] {
  return resourcesOfType(template, 'AWS::CloudFront::Distribution').flatMap(([logicalId, resource]) => {
    const config = resource.Properties!.DistributionConfig;
    const behavior = config.DefaultCacheBehavior;
    const association = (behavior.FunctionAssociations ?? []).find((a: any) => a.EventType === 'viewer-request');
    const functionId = association ? getAttOf(association.FunctionARN) : null;
    const code = functionId ? template.resources[functionId]?.Properties?.FunctionCode : null;
    const origin = config.Origins.find((o: any) => o.Id === behavior.TargetOriginId);
    if (origin?.S3OriginConfig) return [];
    const functionUrlOrigins = functionUrlOriginsOf(template, config.Origins);
    const originFunctionLogicalId = functionUrlOrigins.get(behavior.TargetOriginId)?.functionLogicalId;
    if (!originFunctionLogicalId)
      throw new Error(`Distribution ${logicalId}: its origin is not a Lambda function URL the local platform can run`);
    const cachePolicyId = behavior.CachePolicyId?.Ref as string | undefined;
    const cacheHeaders = cachePolicyId
      ? template.resources[cachePolicyId]?.Properties?.CachePolicyConfig?.ParametersInCacheKeyAndForwardedToOrigin?.HeadersConfig?.Headers
      : undefined;
    const originIds = (config.Origins as { Id: string }[]).map((o) => o.Id);
    const distribution: TemplateDistribution = {
      path: constructPath(resource),
      viewerRequest: code ? compileViewerFunction(String(code), originIds) : null,
      // CloudFront's default when the behavior names none.
      allowedMethods: ((behavior.AllowedMethods as string[] | undefined) ?? ['GET', 'HEAD']).map((m) => m.toUpperCase()),
      originFunctionLogicalId,
      defaultOriginId: behavior.TargetOriginId,
      functionUrlOrigins,
      vpcOrigins: vpcOriginsOf(template, logicalId, config.Origins),
      forwardedHeaders: behavior.OriginRequestPolicyId ? 'all-except-host' : (cacheHeaders ?? []).map((h: string) => h.toLowerCase()),
    };
    return [distribution];
  });
}

/** A behavior of the console's distribution whose origin is a Lambda function URL: a streaming API route (infra/api.ts). */
export interface StreamingBehavior {
  pathPattern: string;
  matches(path: string): boolean;
  distribution: TemplateDistribution;
}

/** CloudFront's path pattern: `*` any run of characters (slashes too), `?` one character, case-sensitive. */
function pathPatternRegExp(pattern: string): RegExp {
  const source = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source.startsWith('/') ? '' : '/'}${source}$`);
}

/**
 * The console's streaming routes: the behaviors of the distributions whose default origin is a bucket (left to the
 * platform's console host) that send a path to a Lambda function URL, in the distribution's order (CloudFront takes
 * the first behavior whose pattern matches). The origin request policy forwards every viewer header but Host.
 */
export function templateStreamingBehaviors(template: SynthesizedTemplate): StreamingBehavior[] {
  return resourcesOfType(template, 'AWS::CloudFront::Distribution').flatMap(([, resource]) => {
    const config = resource.Properties!.DistributionConfig;
    const defaultOrigin = config.Origins.find((o: any) => o.Id === config.DefaultCacheBehavior.TargetOriginId);
    if (!defaultOrigin?.S3OriginConfig) return [];
    return ((config.CacheBehaviors ?? []) as any[]).flatMap((behavior) => {
      const functionUrlOrigins = functionUrlOriginsOf(
        template,
        (config.Origins as TemplateOrigin[]).filter((o) => o.Id === behavior.TargetOriginId),
      );
      const originFunctionLogicalId = functionUrlOrigins.get(behavior.TargetOriginId)?.functionLogicalId;
      if (!originFunctionLogicalId) return [];
      const pattern = pathPatternRegExp(String(behavior.PathPattern));
      return [
        {
          pathPattern: String(behavior.PathPattern),
          matches: (path: string) => pattern.test(path),
          distribution: {
            path: constructPath(resource),
            viewerRequest: null,
            // CloudFront's default when the behavior names none.
            allowedMethods: ((behavior.AllowedMethods as string[] | undefined) ?? ['GET', 'HEAD']).map((m) => m.toUpperCase()),
            originFunctionLogicalId,
            defaultOriginId: behavior.TargetOriginId,
            functionUrlOrigins,
            vpcOrigins: new Map(),
            forwardedHeaders: behavior.OriginRequestPolicyId ? 'all-except-host' : [],
          } satisfies TemplateDistribution,
        },
      ];
    });
  });
}

interface TemplateOrigin {
  Id: string;
  DomainName?: unknown;
  OriginAccessControlId?: unknown;
  OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[];
  VpcOriginConfig?: { VpcOriginId?: unknown; OriginReadTimeout?: number };
}

/** The origins whose domain is a function URL of the template (`Fn::Select` of its `FunctionUrl`), with their auth. */
function functionUrlOriginsOf(template: SynthesizedTemplate, origins: TemplateOrigin[]): Map<string, FunctionUrlOrigin> {
  const found = new Map<string, FunctionUrlOrigin>();
  for (const origin of origins) {
    const urlId = getAttOf(origin.DomainName);
    const url = urlId ? template.resources[urlId] : undefined;
    if (url?.Type !== 'AWS::Lambda::Url') continue;
    const functionLogicalId = getAttOf(url.Properties?.TargetFunctionArn);
    if (!functionLogicalId) continue;
    const controlId = getAttOf(origin.OriginAccessControlId);
    const control = controlId ? template.resources[controlId]?.Properties?.OriginAccessControlConfig : undefined;
    found.set(origin.Id, {
      functionLogicalId,
      authType: url.Properties?.AuthType === 'NONE' ? 'NONE' : 'AWS_IAM',
      signed: control?.OriginAccessControlOriginType === 'lambda' && control?.SigningBehavior !== 'never',
      customHeaders: (origin.OriginCustomHeaders ?? []).map((h) => ({ name: h.HeaderName.toLowerCase(), value: h.HeaderValue })),
      headers: {},
    });
  }
  return found;
}

/** Resolves each function URL origin's custom headers (a secret's dynamic reference fetched), as CloudFormation does at deploy. */
export async function resolveOriginHeaders(
  distributions: TemplateDistribution[],
  resolve: (value: unknown) => Promise<string>,
): Promise<void> {
  for (const distribution of distributions)
    for (const origin of distribution.functionUrlOrigins.values())
      for (const { name, value } of origin.customHeaders) origin.headers[name] = await resolve(value);
}

const SECRET_REFERENCE = /\{\{resolve:secretsmanager:(.+?):SecretString:([^:}]*):([^:}]*):([^:}]*)\}\}/g;

/**
 * A string's `{{resolve:secretsmanager:ARN:SecretString:field:stage:version}}` references, each replaced by the secret's
 * value (its JSON field when one is named); any other dynamic reference is an error, never left as text.
 */
export async function resolveDynamicReferences(text: string, secretString: (arn: string) => Promise<string>): Promise<string> {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(SECRET_REFERENCE)) {
    const [whole, arn, field] = match;
    const value = await secretString(arn!);
    out += text.slice(last, match.index) + (field ? String(JSON.parse(value)[field]) : value);
    last = match.index! + whole.length;
  }
  out += text.slice(last);
  if (out.includes('{{resolve:')) throw new Error(`A dynamic reference the local platform cannot resolve: ${out}`);
  return out;
}

function vpcOriginsOf(template: SynthesizedTemplate, distributionId: string, origins: TemplateOrigin[]): Map<string, VpcOrigin> {
  const found = new Map<string, VpcOrigin>();
  for (const origin of origins.filter((o) => o.VpcOriginConfig)) {
    const vpcOriginId = getAttOf(origin.VpcOriginConfig!.VpcOriginId);
    const endpoint = vpcOriginId ? template.resources[vpcOriginId]?.Properties?.VpcOriginEndpointConfig : undefined;
    // A load balancer's ARN is its Ref; an instance's is joined from its Ref (arn:...:ec2:...:instance/{id}).
    const loadBalancerLogicalId = endpoint?.Arn?.Ref ?? getAttOf(endpoint?.Arn);
    const instanceLogicalId = (JSON.stringify(endpoint?.Arn ?? null).match(/:instance\/",\{"Ref":"([^"]+)"\}/) ?? [])[1];
    const target =
      loadBalancerLogicalId && template.resources[loadBalancerLogicalId]?.Type === 'AWS::ElasticLoadBalancingV2::LoadBalancer'
        ? { kind: 'load-balancer' as const, logicalId: loadBalancerLogicalId }
        : instanceLogicalId && template.resources[instanceLogicalId]?.Type === 'AWS::EC2::Instance'
          ? { kind: 'instance' as const, logicalId: instanceLogicalId }
          : null;
    if (!target || endpoint.OriginProtocolPolicy !== 'http-only')
      throw new Error(
        `Distribution ${distributionId}: origin ${origin.Id} is not a VPC origin of a load balancer or an EC2 instance over HTTP`,
      );
    found.set(origin.Id, {
      target,
      port: Number(endpoint.HTTPPort ?? 80),
      readTimeoutMs: 1000 * Number(origin.VpcOriginConfig!.OriginReadTimeout ?? 30),
    });
  }
  return found;
}

function viewerRequestOf(req: IncomingMessage): ViewerRequest {
  const url = new URL(req.url ?? '/', 'http://viewer');
  const headers: Record<string, CloudFrontValue> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name !== 'cookie' && value !== undefined) headers[name] = { value: Array.isArray(value) ? value.join(',') : value };
  }
  const querystring: Record<string, CloudFrontValue> = {};
  for (const [name, value] of url.searchParams) querystring[name] = { value };
  const cookies: Record<string, CloudFrontValue> = {};
  for (const pair of String(req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = pair.trim().split('=');
    if (name) cookies[name] = { value: rest.join('=') };
  }
  return { method: (req.method ?? 'GET').toUpperCase(), uri: url.pathname, querystring, headers, cookies };
}

/**
 * What CloudFront hands the origin Lambda's function URL: the request after
 * the viewer function, with the headers the behavior forwards (the revalidation
 * headers CloudFront itself sends, since this stand-in keeps no cache), the
 * origin's custom headers, Host being the function URL's own.
 */
function functionUrlEvent(
  request: ViewerRequest,
  distribution: TemplateDistribution,
  origin: FunctionUrlOrigin,
  rawQuery: string,
  viewerIp: string,
  body: Buffer,
) {
  const headers: Record<string, string> = {};
  for (const [name, { value }] of Object.entries(request.headers)) {
    const forwarded =
      distribution.forwardedHeaders === 'all-except-host'
        ? name !== 'host'
        : distribution.forwardedHeaders.includes(name) || ['if-none-match', 'if-modified-since', 'accept-encoding', 'range'].includes(name);
    if (forwarded) headers[name] = value;
  }
  // The origin's custom headers replace a viewer header of the same name.
  Object.assign(headers, origin.headers);
  headers.host = 'function-url.lambda-url.local.on.aws';
  const cookies = Object.entries(request.cookies).map(([name, { value }]) => `${name}=${value}`);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: request.uri,
    rawQueryString: rawQuery,
    headers,
    ...(cookies.length && distribution.forwardedHeaders === 'all-except-host' ? { cookies } : {}),
    requestContext: {
      http: { method: request.method, path: request.uri, protocol: 'HTTP/1.1', sourceIp: viewerIp, userAgent: headers['user-agent'] ?? '' },
      domainName: headers.host,
      requestId: crypto.randomUUID(),
      routeKey: '$default',
      stage: '$default',
      timeEpoch: Date.now(),
    },
    // A function URL passes a text body as it is and any other body base64.
    ...(body.length ? { body: isTextBody(headers['content-type']) ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !isTextBody(headers['content-type']),
  };
}

const isTextBody = (contentType: string | undefined) =>
  /^text\/|[/+](json|xml|javascript)\b|^application\/x-www-form-urlencoded/i.test(contentType ?? '');

async function requestBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** CloudFront's 403 for a method the cache behavior does not allow (its AllowedMethods). */
const METHOD_NOT_ALLOWED =
  '403 ERROR: This distribution is not configured to allow the HTTP request method that was used for this request. The distribution supports only cachable requests.';

/** The sha256 of no bytes: the payload hash a signed request without a body declares. */
const EMPTY_PAYLOAD_SHA256 = createHash('sha256').digest('hex');

/**
 * What Lambda answers the origin request instead of invoking the function. A URL with AWS_IAM auth takes only a
 * signed request; origin access control signs with the viewer's `x-amz-content-sha256` as the payload hash (with
 * none, the hash of no bytes), and Lambda refuses a payload that does not hash to it: unsigned payloads are not
 * accepted, so a browser's form post through such an origin is a 403.
 */
function functionUrlRefusal(origin: FunctionUrlOrigin, request: ViewerRequest, body: Buffer): { type: string; body: object } | null {
  if (origin.authType === 'NONE') return null;
  if (!origin.signed) return { type: 'AccessDeniedException', body: { Message: 'Forbidden' } };
  const declared = request.headers['x-amz-content-sha256']?.value ?? EMPTY_PAYLOAD_SHA256;
  if (declared === createHash('sha256').update(body).digest('hex')) return null;
  return {
    type: 'InvalidSignatureException',
    body: {
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    },
  };
}

/** CloudFront's answer when a viewer function throws (an unknown origin id included). */
function functionFailed(req: IncomingMessage, res: ServerResponse, distribution: TemplateDistribution, error: unknown): void {
  logger.error('The CloudFront function failed: the viewer gets 503', { distribution: distribution.path, error: (error as Error).message });
  plainReply(req, res, 503, '503 ERROR: The CloudFront function associated with the CloudFront distribution is invalid or could not run.');
}

/**
 * Answers a viewer request through a distribution of the template: its viewer function, then the origin: the
 * function URL's Lambda, or the VPC origin the function selected (through the local load balancers).
 */
export async function answerThroughDistribution(
  req: IncomingMessage,
  res: ServerResponse,
  distribution: TemplateDistribution,
  lambdaOf: (logicalId: string) => LambdaFunctionHost,
  vpcTargets: { loadBalancers?: LocalLoadBalancers; instances?: ContainerInstances } = {},
  /** `body`: the request's, read already (the console host reads an API request's body first). */
  options: { body?: Buffer } = {},
): Promise<void> {
  const viewerIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  const rawQuery = new URL(req.url ?? '/', 'http://viewer').search.slice(1);
  let request = viewerRequestOf(req);
  // Before any function: a method the behavior does not allow is CloudFront's own 403.
  if (!distribution.allowedMethods.includes(request.method)) return plainReply(req, res, 403, METHOD_NOT_ALLOWED);
  let originId = distribution.defaultOriginId;
  if (distribution.viewerRequest) {
    let result: ViewerRequest | ViewerReply;
    try {
      result = distribution.viewerRequest(request, viewerIp);
    } catch (error) {
      return functionFailed(req, res, distribution, error);
    }
    if ('statusCode' in result) {
      // The caller may still be sending: its body is read and dropped, so it gets this reply rather than a reset.
      req.resume();
      const body = viewerReplyBody(result);
      const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, { value }]) => [name, value]));
      res.writeHead(result.statusCode, { ...headers, 'content-length': String(body.length) });
      return void res.end(body);
    }
    request = result;
    originId = selectedOriginOf(result) ?? originId;
    const vpcOrigin = distribution.vpcOrigins.get(originId);
    if (vpcOrigin) {
      const { forwardedHeaders } = distribution;
      return forwardToVpcOrigin(req, res, request, vpcOrigin, { forwardedHeaders, viewerIp, rawQuery, ...vpcTargets });
    }
  }
  const origin = distribution.functionUrlOrigins.get(originId);
  if (!origin) {
    // An origin of the distribution of another kind (a bucket, a custom origin): a limit of this stand-in.
    logger.error('The local CloudFront sends only to a function URL or a VPC origin', { distribution: distribution.path, originId });
    return plainReply(req, res, 502, '502 ERROR: the local platform cannot send a request to this origin.');
  }
  const body = options.body ?? (await requestBody(req));
  const refused = functionUrlRefusal(origin, request, body);
  if (refused) {
    res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': refused.type });
    return void res.end(JSON.stringify(refused.body));
  }
  const event = functionUrlEvent(request, distribution, origin, rawQuery, viewerIp, body);
  if (Buffer.byteLength(JSON.stringify(event)) > INVOKE_PAYLOAD_LIMIT_BYTES) {
    // The function URL's own answer: its invocation payload (the event, a binary body base64) is capped at 6 MB.
    const message = `Request must be smaller than ${INVOKE_PAYLOAD_LIMIT_BYTES} bytes for the InvokeFunction operation`;
    res.writeHead(413, { 'content-type': 'application/json', 'x-amzn-errortype': 'RequestEntityTooLargeException' });
    return void res.end(JSON.stringify({ Message: message }));
  }
  try {
    const reply = (await lambdaOf(origin.functionLogicalId).invoke(event)) as StreamedReply;
    const head = reply.head as { statusCode?: number; headers?: Record<string, string>; cookies?: string[] };
    const headers: Record<string, string | string[]> = { ...(head.headers ?? {}) };
    if (head.cookies?.length) headers['set-cookie'] = head.cookies;
    res.writeHead(head.statusCode ?? 200, headers);
    // The head leaves now: a stream's first bytes may be long in coming (a live tail's).
    res.flushHeaders();
    // The viewer left before the body's end: the function's stream closes, as the function URL's connection does.
    res.once('close', () => {
      if (!res.writableFinished) reply.callerGone();
    });
    await pipeline(reply.body, res);
  } catch {
    // Mid-body, the origin's stream was cut (a budget that ended): CloudFront cuts the viewer's connection.
    if (res.headersSent) return void res.destroy();
    // CloudFront's answer when the origin fails.
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('502 Bad Gateway: the origin failed');
  }
}

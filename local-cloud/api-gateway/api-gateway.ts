import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { logger } from '../../lib/logger.ts';
import { toApiGatewayEvent, writeResult } from '../../lib/local/api-event.ts';
import type { LambdaFunctionHost } from '../lambda/lambda-host.ts';
import { resourcesOfType, type SynthesizedTemplate } from '../template/template.ts';

/** One route of the template's HTTP API, compiled for matching. */
export interface TemplateRoute {
  routeKey: string;
  method: string;
  segments: string[];
  functionLogicalId: string;
  /** The integration's credentials: the role API Gateway assumes to invoke the function (null: a permission on it). */
  credentialsRoleLogicalId: string | null;
  payloadFormatVersion: string;
}

export interface CorsSettings {
  allowOrigins: string[];
  allowHeaders: string[];
  allowMethods: string[];
  exposeHeaders: string[];
  maxAge?: number;
  allowCredentials: boolean;
}

function refInside(value: unknown, wanted: (logicalId: string) => boolean): string | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = refInside(item, wanted);
      if (found) return found;
    }
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  if (typeof record.Ref === 'string' && wanted(record.Ref)) return record.Ref;
  if (Array.isArray(record['Fn::GetAtt']) && wanted(String(record['Fn::GetAtt'][0]))) return String(record['Fn::GetAtt'][0]);
  return refInside(Object.values(record), wanted);
}

/** The routes of the template's HTTP API with the Lambda each route's integration invokes. */
export function templateRoutes(template: SynthesizedTemplate): TemplateRoute[] {
  const isType = (type: string) => (logicalId: string) => template.resources[logicalId]?.Type === type;
  return resourcesOfType(template, 'AWS::ApiGatewayV2::Route').map(([logicalId, route]) => {
    const props = route.Properties ?? {};
    const integrationId = refInside(props.Target, isType('AWS::ApiGatewayV2::Integration'));
    const integration = integrationId ? (template.resources[integrationId]!.Properties ?? {}) : null;
    const functionLogicalId = integration ? refInside(integration.IntegrationUri, isType('AWS::Lambda::Function')) : null;
    if (!integration || !functionLogicalId || integration.IntegrationType !== 'AWS_PROXY') {
      throw new Error(`Route ${logicalId} (${props.RouteKey}) has no Lambda proxy integration the local platform can run`);
    }
    const routeKey = String(props.RouteKey);
    const [method, path] = routeKey === '$default' ? ['ANY', ''] : routeKey.split(' ');
    return {
      routeKey,
      method: method!,
      segments: path ? path.split('/').filter(Boolean) : [],
      functionLogicalId,
      credentialsRoleLogicalId: integration.CredentialsArn ? refInside(integration.CredentialsArn, isType('AWS::IAM::Role')) : null,
      payloadFormatVersion: String(integration.PayloadFormatVersion ?? '1.0'),
    };
  });
}

/** The API's CORS configuration, whose origins are a deployment setting the platform supplies. */
export function templateCors(template: SynthesizedTemplate, origins: string[]): CorsSettings | null {
  const api = resourcesOfType(template, 'AWS::ApiGatewayV2::Api')[0]?.[1];
  const cors = api?.Properties?.CorsConfiguration;
  if (!cors) return null;
  return {
    allowOrigins: origins,
    allowHeaders: cors.AllowHeaders ?? [],
    allowMethods: cors.AllowMethods ?? [],
    exposeHeaders: cors.ExposeHeaders ?? [],
    maxAge: cors.MaxAge,
    allowCredentials: Boolean(cors.AllowCredentials),
  };
}

/**
 * API Gateway's choice among matching routes: the most specific path wins
 * (a literal segment over a `{param}`, a `{param}` over a greedy `{param+}`),
 * a route of the method over ANY, `$default` last.
 */
export function selectRoute(
  routes: TemplateRoute[],
  method: string,
  path: string,
): { route: TemplateRoute; params: Record<string, string> } | null {
  const parts = path.split('/').filter(Boolean);
  let best: { route: TemplateRoute; params: Record<string, string>; score: number[] } | null = null;
  for (const route of routes) {
    if (route.routeKey === '$default') continue;
    if (route.method !== method && route.method !== 'ANY') continue;
    const params: Record<string, string> = {};
    const score: number[] = [];
    let ok = true;
    for (let i = 0; i < route.segments.length && ok; i++) {
      const segment = route.segments[i]!;
      const greedy = /^\{(.+)\+\}$/.exec(segment);
      const param = /^\{(.+)\}$/.exec(segment);
      if (greedy) {
        if (i >= parts.length) ok = false;
        else params[greedy[1]!] = parts.slice(i).map(decodeURIComponent).join('/');
        score.push(2);
        break;
      }
      if (i >= parts.length) ok = false;
      else if (param) (params[param[1]!] = decodeURIComponent(parts[i]!)), score.push(1);
      else if (segment === parts[i]) score.push(0);
      else ok = false;
    }
    const greedyEnd = /\+\}$/.test(route.segments.at(-1) ?? '');
    if (!ok || (!greedyEnd && route.segments.length !== parts.length)) continue;
    score.push(route.method === 'ANY' ? 1 : 0);
    const better = !best || compareScores(score, best.score) < 0;
    if (better) best = { route, params, score };
  }
  if (best) return { route: best.route, params: best.params };
  const fallback = routes.find((route) => route.routeKey === '$default');
  return fallback ? { route: fallback, params: {} } : null;
}

function compareScores(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = (a[i] ?? -1) - (b[i] ?? -1);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** API Gateway's own preflight answer from the API's CORS configuration. */
export function answerTemplatePreflight(req: IncomingMessage, res: ServerResponse, cors: CorsSettings): void {
  const origin = req.headers.origin;
  const headers: Record<string, string> = {};
  if (origin && cors.allowOrigins.includes(origin)) {
    headers['access-control-allow-origin'] = origin;
    if (cors.allowCredentials) headers['access-control-allow-credentials'] = 'true';
    headers['access-control-allow-methods'] = cors.allowMethods.join(', ');
    // Like API Gateway: the requested headers when the configuration allows each, else the configured list.
    const requested = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean);
    const allowed = new Set(cors.allowHeaders.map((h) => h.toLowerCase()));
    const echo = requested.length > 0 && requested.every((h) => allowed.has(h.toLowerCase()));
    headers['access-control-allow-headers'] = echo ? requested.join(', ') : cors.allowHeaders.join(', ');
    if (cors.exposeHeaders.length) headers['access-control-expose-headers'] = cors.exposeHeaders.join(', ');
    if (cors.maxAge !== undefined) headers['access-control-max-age'] = String(cors.maxAge);
  }
  res.writeHead(204, { ...headers, vary: 'Origin' });
  res.end();
}

/**
 * The API as the template wires it: a request routed to its route's Lambda with the payload format 2.0 event.
 * `refusals` names the routes whose Lambda API Gateway would not be allowed to invoke (api-invoke.ts).
 */
export function templateApi(
  routes: TemplateRoute[],
  cors: () => CorsSettings | null,
  lambdaOf: (logicalId: string) => LambdaFunctionHost,
  refusals: Map<string, string> = new Map(),
) {
  return async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const settings = cors();
    if (method === 'OPTIONS' && settings && req.headers['access-control-request-method'])
      return answerTemplatePreflight(req, res, settings);
    const url = new URL(req.url ?? '/', 'http://local');
    const selected = selectRoute(routes, method, url.pathname);
    if (!selected) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ message: 'Not Found' }));
    }
    const event = toApiGatewayEvent(req, body, { routeKey: selected.route.routeKey, pathParameters: selected.params });
    const refusal = refusals.get(selected.route.routeKey);
    if (refusal) {
      logger.error('API Gateway cannot invoke the route', { routeKey: selected.route.routeKey, refusal });
      res.writeHead(500, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ message: 'Internal Server Error' }));
    }
    try {
      const result = (await lambdaOf(selected.route.functionLogicalId).invoke(event)) as
        | APIGatewayProxyStructuredResultV2
        | string
        | undefined;
      writeResult(res, result ?? undefined);
    } catch {
      // API Gateway's answer when the integration fails (an unhandled error, a timeout).
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    }
  };
}

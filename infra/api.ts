import { Duration, NestedStack, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { fallbackRoute, routeKey, routes, type RouteRow } from '../lib/http/routes.ts';
import { HandlerFunction, pascalCase, SharedExecution } from './functions.ts';
import type { GrantContext } from './grants.ts';

/** The API's prefix, left out of construct ids because every route carries it. */
const commonPrefix = '/api/v1/';

/**
 * The construct id of a route's function, derived from the route so that
 * tests and operators can find a route's Lambda by its key:
 * `GET /api/v1/teams/{team}/profile` -> `GetTeamsByTeamProfile`.
 */
export function routeConstructId(row: Pick<RouteRow, 'method' | 'path'>): string {
  const rest = row.path.startsWith(commonPrefix) ? row.path.slice(commonPrefix.length) : row.path;
  const segments = rest
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+?)\+?\}$/.exec(segment);
      return param ? `By${pascalCase(param[1]!)}` : pascalCase(segment);
    });
  return pascalCase(row.method.toLowerCase()) + segments.join('');
}

const maxIntegrationSeconds = 30;

/**
 * How many route functions one invoke role may name: CDK moves statements past
 * its estimate of a policy's size limit into extra managed policies (more
 * resources); 40 function ARNs stay inside one policy.
 */
const functionsPerInvokeRole = 40;

/**
 * API Gateway invokes the route functions through roles it assumes (the
 * integration's credentials), not through a resource-based permission on each
 * function: a permission is one more CloudFormation resource per route, and the
 * stack must stay under 500 resources. Each role names exactly its functions,
 * so API Gateway can invoke the route functions and nothing else.
 */
class RouteInvokeRoles {
  private current?: iam.Role;
  private named = 0;
  private count = 0;

  constructor(private readonly scope: Construct) {}

  roleFor(fn: lambda.IFunction): iam.Role {
    if (!this.current || this.named === functionsPerInvokeRole) {
      this.count += 1;
      this.current = new iam.Role(this.scope, `InvokeRole${this.count}`, {
        assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
        description: 'API Gateway invokes Slipway route functions with this role',
      });
      this.named = 0;
    }
    this.named += 1;
    // The function's own ARN only: routes invoke $LATEST, never a version or alias.
    this.current.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }));
    return this.current;
  }
}

/** A Lambda proxy integration (payload 2.0) that API Gateway calls with an invoke role's credentials. */
class RoleInvokedLambdaIntegration extends apigwv2.HttpRouteIntegration {
  constructor(
    id: string,
    private readonly fn: lambda.IFunction,
    private readonly roles: RouteInvokeRoles,
  ) {
    super(id);
  }

  bind(): apigwv2.HttpRouteIntegrationConfig {
    return {
      type: apigwv2.HttpIntegrationType.AWS_PROXY,
      uri: this.fn.functionArn,
      payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
      credentials: apigwv2.IntegrationCredentials.fromRole(this.roles.roleFor(this.fn)),
    };
  }
}

/** Mirrors the local API server's preflight answer (lib/local/api-server.ts) and the pipeline's CORS middleware. */
const corsAllowHeaders = ['authorization', 'content-type', 'idempotency-key', 'x-team-id', 'x-platform-client', 'traceparent'];
const corsExposeHeaders = ['Deprecation', 'Link', 'Retry-After', 'X-Request-Id'];

/** API Gateway answers preflights itself (none without CORS origins); the pipeline adds CORS headers to real replies. */
function corsPreflight(origins: string[]): apigwv2.CorsPreflightOptions | undefined {
  if (origins.length === 0) return undefined;
  return {
    allowOrigins: origins,
    allowCredentials: true,
    allowMethods: [
      apigwv2.CorsHttpMethod.GET,
      apigwv2.CorsHttpMethod.POST,
      apigwv2.CorsHttpMethod.PUT,
      apigwv2.CorsHttpMethod.PATCH,
      apigwv2.CorsHttpMethod.DELETE,
    ],
    allowHeaders: corsAllowHeaders,
    exposeHeaders: corsExposeHeaders,
    maxAge: Duration.minutes(10),
  };
}

export interface SlipwayApiProps {
  grants: GrantContext;
  /** Environment of every function: resource names, domains, CORS origins. */
  environment: Record<string, string>;
  /** Extra environment per use (schedule target ARNs for `scheduler:write`). */
  environmentFor: (uses: RouteRow['uses']) => Record<string, string>;
  corsOrigins: string[];
}

/** The HTTP API: one Lambda per row of the route table, plus `$default` for everything else. */
export class SlipwayApi extends Construct {
  readonly httpApi: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
  /** The function of each route, by route key (`METHOD /path`). */
  readonly routeFunctions = new Map<string, HandlerFunction>();
  readonly fallbackFunction: HandlerFunction;
  /**
   * Streaming routes (lib/http/streaming.ts): an HTTP API buffers a reply and ends it at 30 s, so each is a
   * response-streaming function URL that the console's distribution routes to by path (infra/console.ts).
   */
  readonly streamingRoutes: { pathPattern: string; url: lambda.FunctionUrl }[] = [];

  constructor(scope: Construct, id: string, props: SlipwayApiProps) {
    super(scope, id);
    // Routes of the same uses share a role, and all routes one log group (infra/functions.ts SharedExecution).
    const shared = new SharedExecution(this, 'RouteExecution', props.grants);
    const functionProps = (
      row: Pick<RouteRow, 'handler' | 'uses' | 'timeoutSeconds' | 'memoryMb' | 'runtimePackages'>,
      description: string,
    ) => ({
      handler: row.handler,
      description,
      uses: row.uses,
      timeoutSeconds: row.timeoutSeconds,
      memoryMb: row.memoryMb,
      runtimePackages: row.runtimePackages,
      environment: { ...props.environment, ...props.environmentFor(row.uses) },
      grants: props.grants,
      shared,
    });

    this.fallbackFunction = new HandlerFunction(this, 'Fallback', functionProps(fallbackRoute, 'Slipway $default route'));
    // CloudFormation takes at most 500 resources a stack, and every route costs three (function, route,
    // integration): the routes, their integrations and the roles that invoke their functions live in a nested
    // stack, whose parameters are the API's id and each function's ARN (at most 200: room for twice today's routes).
    const routeStack = new NestedStack(this, 'Routes', { description: 'Slipway API routes and their Lambda integrations' });
    const invokeRoles = new RouteInvokeRoles(routeStack);

    this.httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
      description: 'Slipway platform API',
      createDefaultStage: false,
      corsPreflight: corsPreflight(props.corsOrigins),
      defaultIntegration: new RoleInvokedLambdaIntegration('FallbackIntegration', this.fallbackFunction.fn, new RouteInvokeRoles(this)),
    });

    for (const row of routes as readonly RouteRow[]) {
      const key = routeKey(row);
      const constructId = routeConstructId(row);
      if (this.node.tryFindChild(constructId)) throw new Error(`Two routes map to the construct id ${constructId}; rename one path`);
      if (row.streaming) {
        this.addStreamingRoute(row, constructId, functionProps(row, `Slipway route ${key} (streaming)`));
        continue;
      }
      // An HTTP API waits at most 30 s for its integration; a longer Lambda would answer nobody.
      if ((row.timeoutSeconds ?? 0) > maxIntegrationSeconds) {
        throw new Error(`Route ${key}: timeout ${row.timeoutSeconds}s exceeds API Gateway's ${maxIntegrationSeconds}s integration limit`);
      }
      const fn = new HandlerFunction(this, constructId, functionProps(row, `Slipway route ${key}`));
      this.routeFunctions.set(key, fn);
      new apigwv2.HttpRoute(routeStack, `${constructId}Route`, {
        httpApi: this.httpApi,
        routeKey: apigwv2.HttpRouteKey.with(row.path, apigwv2.HttpMethod[row.method]),
        integration: new RoleInvokedLambdaIntegration(`${constructId}Integration`, fn.fn, invokeRoles),
      });
    }

    this.acknowledgeAuthorization();

    this.stage = this.defaultStage();
  }

  /** The one stage, deployed on every change, with an access log line per request. */
  private defaultStage(): apigwv2.HttpStage {
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    return new apigwv2.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      autoDeploy: true,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        // HTTP API context variables (the REST API presets name some that HTTP APIs lack).
        format: apigateway.AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            ip: '$context.identity.sourceIp',
            requestTime: '$context.requestTime',
            httpMethod: '$context.httpMethod',
            routeKey: '$context.routeKey',
            path: '$context.path',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            userAgent: '$context.identity.userAgent',
          }),
        ),
      },
    });
  }

  /** A streaming route: its function with a response-streaming URL, which the console's distribution routes to by path. */
  private addStreamingRoute(row: RouteRow, constructId: string, fnProps: ConstructorParameters<typeof HandlerFunction>[2]): void {
    const fn = new HandlerFunction(this, constructId, fnProps);
    this.routeFunctions.set(routeKey(row), fn);
    // The handler authenticates every request itself (the route's access rule), as behind the HTTP API; origin
    // access control would replace the caller's Authorization header with CloudFront's signature.
    const url = fn.fn.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE, invokeMode: lambda.InvokeMode.RESPONSE_STREAM });
    this.streamingRoutes.push({ pathPattern: row.path.replace(/\{[^}]+\}/g, '*'), url });
  }

  private acknowledgeAuthorization(): void {
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Every route authorizes in its Lambda from the access rule of its route-table row (bearer tokens checked against hashed credentials, team roles, resource teams). ' +
        'An API Gateway authorizer cannot decide resource-team rules, and some routes are public by the spec.',
    });
  }
}

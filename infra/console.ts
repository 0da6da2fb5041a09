import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { CLOUD_STORAGE_ORIGINS, consoleContentSecurityPolicy } from '../lib/http/console-headers.ts';
import { repoRoot } from './bundling.ts';

export interface ConsoleProps {
  httpApi: apigwv2.HttpApi;
  /** Routes that stream their reply (a live tail), each a function URL reached by its path (infra/api.ts). */
  streamingRoutes?: { pathPattern: string; url: lambda.FunctionUrl }[];
  /** The console's hostname (context `consoleDomain`, default `app.{siteDomain}`). */
  domain: string;
  /** ACM certificate (us-east-1) of that hostname; context `consoleCertificateArn`. Without it, only the cloudfront.net name answers. */
  certificateArn?: string;
  accessLogsBucket: s3.IBucket;
}

/** The built console; `cdk synth` builds it with the repository's esbuild when it is not built yet. */
function dashboardDist(): string {
  const dist = join(repoRoot, 'dashboard', 'dist');
  if (!existsSync(join(dist, 'index.html'))) {
    execFileSync(process.execPath, [join(repoRoot, 'dashboard', 'build.mjs')], { stdio: 'inherit' });
  }
  return dist;
}

/** The managed SecurityHeadersPolicy's headers, framing refused outright, and the console's CSP (lib/http/console-headers.ts). */
function consoleSecurityHeaders(scope: Construct): cloudfront.ResponseHeadersPolicy {
  return new cloudfront.ResponseHeadersPolicy(scope, 'SecurityHeaders', {
    comment: 'Slipway console: Content-Security-Policy (frame-ancestors none), X-Frame-Options DENY, HSTS, nosniff',
    securityHeadersBehavior: {
      contentSecurityPolicy: { contentSecurityPolicy: consoleContentSecurityPolicy(CLOUD_STORAGE_ORIGINS), override: true },
      frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
      strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
      contentTypeOptions: { override: true },
      referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, override: true },
      xssProtection: { protection: true, modeBlock: true, override: true },
    },
  });
}

/**
 * The console in the cloud: its built files in a private bucket, behind a
 * CloudFront distribution on the console hostname that also routes `/api/*`
 * to the HTTP API, so the console and the API share one origin (no CORS, a
 * first-party session cookie), and `/.well-known/jwks.json` (the forge tokens'
 * keys) to it too. The app's own paths (no dot in the last
 * segment) are answered with index.html by a viewer-request function; API
 * replies pass untouched, so their error envelopes are never replaced.
 */
export class ConsoleHosting extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly url: string;

  constructor(scope: Construct, id: string, props: ConsoleProps) {
    super(scope, id);
    this.bucket = this.filesBucket(props.accessLogsBucket);
    const appPaths = appPathsFunction(this);
    const certificate = props.certificateArn ? acm.Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn) : undefined;
    this.distribution = this.consoleDistribution(props, appPaths, certificate);
    this.url = certificate ? `https://${props.domain}` : `https://${this.distribution.distributionDomainName}`;
    this.deployFiles();
    this.acknowledgeDeploymentHandler();
    new CfnOutput(this, 'ConsoleDistributionDomain', {
      value: this.distribution.distributionDomainName,
      description: `Point ${props.domain} (CNAME or alias) at this name`,
    });
    this.acknowledgeDistribution();
  }

  /** The private bucket of the built files. */
  private filesBucket(accessLogsBucket: s3.IBucket): s3.Bucket {
    return new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogsBucket,
      serverAccessLogsPrefix: 'Console/',
      // Only built files live here: each deploy puts them back.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: false,
      lifecycleRules: [{ noncurrentVersionExpiration: Duration.days(30) }],
    });
  }

  /** The files by default, the API (and streaming routes) on the same origin. */
  private consoleDistribution(
    props: ConsoleProps,
    appPaths: cloudfront.Function,
    certificate: acm.ICertificate | undefined,
  ): cloudfront.Distribution {
    const api = apiBehavior(this, props.httpApi);
    return new cloudfront.Distribution(this, 'Distribution', {
      comment: `Slipway console: ${props.domain}`,
      ...(certificate ? { domainNames: [props.domain], certificate } : {}),
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: consoleSecurityHeaders(this),
        compress: true,
        functionAssociations: [{ function: appPaths, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        // Streaming routes first (more specific than /api/*): a live tail stays open for minutes (the HTTP API: 30 s).
        ...streamingBehaviors(props.streamingRoutes ?? []),
        '/api/*': { ...api, allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL },
        // The forge tokens' JWKS on the console's origin, their `iss` (docs/builds.md, "Forge tokens"): the API answers it.
        '/.well-known/jwks.json': { ...api, allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD },
      },
    });
  }

  /** The built files copied into the bucket at deploy time, index.html invalidated. */
  private deployFiles(): void {
    new s3deploy.BucketDeployment(this, 'Files', {
      sources: [s3deploy.Source.asset(dashboardDist())],
      destinationBucket: this.bucket,
      distribution: this.distribution,
      distributionPaths: ['/index.html'],
      // Hashed bundles of earlier deploys stay: a page loaded before the deploy still finds its script.
      prune: false,
      memoryLimit: 256,
      // Its own log group with a retention: the handler's default group would keep its logs forever.
      logGroup: new logs.LogGroup(this, 'FilesLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
    });
  }

  /** What cdk-nag says of the distribution, answered. */
  private acknowledgeDistribution(): void {
    for (const [rule, reason] of [
      ['AwsSolutions-CFR1', 'The console is for every country; per-country rules belong to custom domains.'],
      ['AwsSolutions-CFR2', 'WAF is an operator choice with its own cost; the API behind /api/* authorizes every route itself.'],
      [
        'AwsSolutions-CFR3',
        'Access logs are an operator choice (cost, retention of visitor addresses); the API stage keeps its own access log.',
      ],
      [
        'AwsSolutions-CFR4',
        'With a certificate the policy is TLSv1.2_2021; without one the distribution is only the default cloudfront.net test name.',
      ],
    ] as const) {
      Validations.of(this.distribution).acknowledge({ id: rule, reason });
    }
  }

  /** CDK's own function that copies the built files in (one per stack, at its top level): what cdk-nag says of it, answered. */
  private acknowledgeDeploymentHandler(): void {
    const handler = Stack.of(this).node.children.find((child) => child.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (!handler) throw new Error("CDK's bucket deployment function was not found at the stack's top level");
    const copies =
      "CDK's BucketDeployment handler copies the console's built files from the CDK asset bucket into the console bucket at deploy time";
    const acknowledgments: [string, string][] = [
      [
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        `${copies}; CDK attaches this managed policy for its logs.`,
      ],
      ['AwsSolutions-L1', `${copies}; its runtime is the one CDK pins for it.`],
      [
        'AwsSolutions-IAM5[Resource::*]',
        `${copies}; CDK grants it the CloudFront invalidation of index.html, which takes no resource-level restriction.`,
      ],
      ...['s3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*', 's3:Abort*'].map((action): [string, string] => [
        `AwsSolutions-IAM5[Action::${action}]`,
        `${copies}; these are CDK's grantRead and grantReadWrite action groups.`,
      ]),
      [
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*]',
        `${copies}; it reads the asset objects CDK uploaded.`,
      ],
      [
        `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnElement)}.Arn>/*]`,
        `${copies}; it writes the objects of this bucket only.`,
      ],
    ];
    for (const [id, reason] of acknowledgments) Validations.of(handler).acknowledge({ id, reason });
  }
}

/** Paths of the single-page app (no dot in the last segment) are answered with index.html, at the viewer request. */
function appPathsFunction(scope: Construct): cloudfront.Function {
  return new cloudfront.Function(scope, 'AppPaths', {
    comment: 'Console: paths of the single-page app are answered with index.html',
    runtime: cloudfront.FunctionRuntime.JS_2_0,
    code: cloudfront.FunctionCode.fromInline(
      'function handler(event) {\n' +
        '  var request = event.request;\n' +
        "  var last = request.uri.split('/').pop();\n" +
        "  if (last.indexOf('.') === -1) request.uri = '/index.html';\n" +
        '  return request;\n' +
        '}\n',
    ),
  });
}

/** The API on the console's origin: nothing cached, cookies and headers passed (Host is the API's own). */
function apiBehavior(scope: Construct, httpApi: apigwv2.HttpApi) {
  const apiDomain = `${httpApi.apiId}.execute-api.${Stack.of(scope).region}.${Stack.of(scope).urlSuffix}`;
  return {
    origin: new origins.HttpOrigin(apiDomain, {
      protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
      readTimeout: Duration.seconds(30),
    }),
    viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
    cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
    originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
    compress: true,
  };
}

/** A behavior per streaming route, to its function URL. The tail writes at least every 20 s, under the 60 s read timeout. */
function streamingBehaviors(routes: { pathPattern: string; url: lambda.FunctionUrl }[]): Record<string, cloudfront.BehaviorOptions> {
  return Object.fromEntries(
    routes.map(({ pathPattern, url }) => [
      pathPattern,
      {
        origin: new origins.FunctionUrlOrigin(url, { readTimeout: Duration.seconds(60) }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
    ]),
  );
}

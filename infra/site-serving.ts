import { CfnOutput, Duration, Validations } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { secretDefinitions } from '../lib/resources.ts';
import { CUSTOM_HOST_HEADER } from '../lib/sites/hostname.ts';
import { SITE_HOST_HEADER, SITE_ORIGIN_HEADER } from '../lib/sites/serve.ts';
import { renderedOrigin } from './cloudfront-origins.ts';
import { HandlerFunction } from './functions.ts';
import type { GrantContext } from './grants.ts';

/** The origin the viewer function selects for every method but GET and HEAD: the serve-site URL that takes a body. */
export const SITE_OTHER_METHODS_ORIGIN_ID = 'site-other-methods';

/**
 * The viewer-request function (cloudfront-js-2.0) of the sites distribution: the site host into `x-slipway-host`
 * (the custom hostname a domain's own distribution names, else the viewer Host), and every method but GET and HEAD
 * to the origin that takes an unsigned body.
 */
export function sitesViewerCode(): string {
  return (
    `import cf from 'cloudfront';\n` +
    `function handler(event) {\n` +
    `  var request = event.request;\n` +
    `  var custom = request.headers['${CUSTOM_HOST_HEADER}'];\n` +
    `  var host = custom ? custom.value : request.headers.host ? request.headers.host.value : '';\n` +
    `  request.headers['${SITE_HOST_HEADER}'] = { value: host };\n` +
    `  if (request.method !== 'GET' && request.method !== 'HEAD') cf.selectRequestOriginById('${SITE_OTHER_METHODS_ORIGIN_ID}');\n` +
    `  return request;\n` +
    `}\n`
  );
}

export interface SiteServingProps {
  grants: GrantContext;
  /** The environment every function gets (table and bucket names, SITE_DOMAIN ...). */
  environment: Record<string, string>;
  /** Sites are served at {subdomain}.{siteDomain}. */
  siteDomain: string;
  /**
   * ACM certificate (us-east-1) for `*.{siteDomain}` and `*.previews.{siteDomain}`; context `siteCertificateArn`.
   * Without it the distribution has no alternate domain name and only answers on
   * its cloudfront.net name, which is not a site host: useful only to test the stack.
   */
  certificateArn?: string;
}

/**
 * The same serving step for POST, PUT, PATCH, DELETE and OPTIONS, behind a public URL (origin access control would
 * make every caller send its body's sha256): it answers 403 to a request without the distribution's origin header.
 */
function otherMethodsFunction(scope: Construct, props: SiteServingProps): HandlerFunction {
  return new HandlerFunction(scope, 'ServeSiteOtherMethods', {
    handler: 'handlers/edge/serve-site.ts',
    description: 'Slipway: serves methods other than GET and HEAD of {subdomain}.{site_domain} (the sites distribution only)',
    uses: ['table:read', 'table:analytics', 'sites:read', 'secrets:siteOrigin'],
    timeoutSeconds: 30,
    memoryMb: 512,
    // The secret's ARN only: the handler reads the value on cold start (lib/aws/secrets.ts).
    environment: {
      ...props.environment,
      GEO_RULES_AT_EDGE: 'true',
      [secretDefinitions.siteOrigin.arnEnvVar]: props.grants.state.secrets.siteOrigin.secretArn,
    },
    grants: props.grants,
  });
}

/** Sites' cache policy: keyed by site host and path (and query), revalidated by ETag on every request. */
function siteCachePolicy(scope: Construct): cloudfront.CachePolicy {
  return new cloudfront.CachePolicy(scope, 'SiteCachePolicy', {
    comment: 'Sites: keyed by site host and path; revalidated by ETag on every request',
    // The origin says max-age=0: CloudFront stores, then revalidates with If-None-Match.
    defaultTtl: Duration.seconds(0),
    minTtl: Duration.seconds(0),
    maxTtl: Duration.days(365),
    headerBehavior: cloudfront.CacheHeaderBehavior.allowList(SITE_HOST_HEADER),
    // Files ignore the query string, but a redirect to the project's primary domain carries it
    // (same path and query) and is cached for 30 days: keyed without it, the first visitor's query
    // would be sent to everyone. The cost is one cache entry per distinct query of a file, each
    // still revalidated by ETag.
    queryStringBehavior: cloudfront.CacheQueryStringBehavior.all(),
    cookieBehavior: cloudfront.CacheCookieBehavior.none(),
    enableAcceptEncodingGzip: true,
    enableAcceptEncodingBrotli: true,
  });
}

/**
 * Sites in the cloud: CloudFront for `*.{site_domain}` in front of the
 * serve-site Lambda (lib/sites/serve.ts, the module the local platform uses),
 * reached through its function URL with origin access control, so only this
 * distribution can call it.
 *
 * Every method reaches the serving step (a `_redirects` rule answers every method). Origin access control signs for
 * Lambda only a body whose sha256 the viewer sent in `x-amz-content-sha256`, which a browser's form post never does,
 * so the viewer function sends GET and HEAD (all that is cached) to that URL and every other method to a second
 * function of the same code whose URL is public and answers only with the distribution's origin header, a generated
 * secret (`siteOrigin`). Neither a Lambda@Edge that hashes bodies (a second invocation on every request, in
 * us-east-1) nor a public URL for every method (the GET path losing IAM) was taken: docs/serving.md, "Methods".
 *
 * Caching is by ETag: the origin answers `Cache-Control: public, max-age=0,
 * must-revalidate` with the file's sha256 as ETag, so CloudFront keeps each
 * object but revalidates it on every request with If-None-Match; the origin's
 * 304 costs two item reads and no S3 read (the route manifest is cached in the
 * function), and a promote or rollback shows on the next request. A 301 to a
 * project's primary domain says `max-age=2592000` and is kept 30 days.
 */
export class SiteServing extends Construct {
  readonly serveFunction: HandlerFunction;
  readonly functionUrl: lambda.FunctionUrl;
  readonly otherMethodsFunction: HandlerFunction;
  readonly otherMethodsUrl: lambda.FunctionUrl;
  readonly distribution: cloudfront.Distribution;

  constructor(scope: Construct, id: string, props: SiteServingProps) {
    super(scope, id);

    this.serveFunction = new HandlerFunction(this, 'ServeSite', {
      handler: 'handlers/edge/serve-site.ts',
      description: 'Slipway: serves the live deployment of {subdomain}.{site_domain}',
      // Reads the subdomain hold, the project, the route manifest and the deployed objects;
      // writes only the site analytics counts (lib/sites/analytics.ts).
      uses: ['table:read', 'table:analytics', 'sites:read'],
      timeoutSeconds: 30,
      memoryMb: 512,
      // A custom domain's geo rule is its distribution's restriction, applied at the edge (lib/config.ts).
      environment: { ...props.environment, GEO_RULES_AT_EDGE: 'true' },
      grants: props.grants,
    });

    // Streaming: a deployed file may exceed Lambda's 6 MB buffered reply.
    this.functionUrl = this.serveFunction.fn.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.AWS_IAM,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });

    // The function URL must see its own Host; the site host travels in a header CloudFront sets:
    // the viewer Host, or the custom hostname a domain's own distribution names on its origin request.
    const copyHost = new cloudfront.Function(this, 'CopySiteHost', {
      comment: `Copies the custom or viewer host into ${SITE_HOST_HEADER}; methods but GET and HEAD to ${SITE_OTHER_METHODS_ORIGIN_ID}`,
      runtime: cloudfront.FunctionRuntime.JS_2_0,
      code: cloudfront.FunctionCode.fromInline(sitesViewerCode()),
    });

    this.otherMethodsFunction = otherMethodsFunction(this, props);
    this.otherMethodsUrl = this.otherMethodsFunction.fn.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });

    const cachePolicy = siteCachePolicy(this);

    const certificate = props.certificateArn
      ? acm.Certificate.fromCertificateArn(this, 'SiteCertificate', props.certificateArn)
      : undefined;

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `Slipway sites: *.${props.siteDomain}`,
      // Previews answer at {label}-{slug}.previews.{siteDomain} (lib/sites/preview-hosts.ts): a wildcard covers one label only.
      ...(certificate ? { domainNames: [`*.${props.siteDomain}`, `*.previews.${props.siteDomain}`], certificate } : {}),
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: origins.FunctionUrlOrigin.withOriginAccessControl(this.functionUrl, {
          readTimeout: Duration.seconds(30),
        }),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        // Every method: the viewer function sends all but GET and HEAD to SITE_OTHER_METHODS_ORIGIN_ID. Only GET and HEAD are cached.
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
        cachePolicy,
        compress: true,
        functionAssociations: [{ function: copyHost, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      },
    });

    const otherMethodsOrigin = new origins.FunctionUrlOrigin(this.otherMethodsUrl, {
      readTimeout: Duration.seconds(30),
      // Resolved by CloudFormation at deploy into the distribution's origin header: never in the template.
      customHeaders: { [SITE_ORIGIN_HEADER]: props.grants.state.secrets.siteOrigin.secretValue.unsafeUnwrap() },
    });
    (this.distribution.node.defaultChild as cloudfront.CfnDistribution).addPropertyOverride(
      'DistributionConfig.Origins.1',
      renderedOrigin(this, 'OtherMethodsOrigin', otherMethodsOrigin, SITE_OTHER_METHODS_ORIGIN_ID),
    );

    new CfnOutput(this, 'SitesDistributionDomain', {
      value: this.distribution.distributionDomainName,
      description: `Point *.${props.siteDomain} and *.previews.${props.siteDomain} (CNAME or alias) at this name`,
    });

    acknowledgeSitesDistribution(this.distribution);
  }
}

/** cdk-nag's distribution findings, each with why it does not apply to the sites distribution. */
function acknowledgeSitesDistribution(distribution: cloudfront.Distribution): void {
  for (const [rule, reason] of [
    [
      'AwsSolutions-CFR1',
      'Sites are public web sites for every country; per-country rules belong to custom domains on dedicated pull zones.',
    ],
    [
      'AwsSolutions-CFR2',
      'WAF is an operator choice with its own cost; the distribution serves static, read-only content (another method only gets a redirect or a file, never a write).',
    ],
    [
      'AwsSolutions-CFR3',
      'Access logs are an operator choice (cost, retention of visitor addresses); they can be switched on per deployment.',
    ],
    [
      'AwsSolutions-CFR4',
      'With a certificate the policy is TLSv1.2_2021; without one the distribution is only the default cloudfront.net test name.',
    ],
  ] as const) {
    Validations.of(distribution).acknowledge({ id: rule, reason });
  }
}

import { Stack, Validations } from 'aws-cdk-lib';
import { scratchApp } from '../support/stack-synth.ts';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { SITE_OTHER_METHODS_ORIGIN_ID, SiteServing } from '../../infra/site-serving.ts';
import { SlipwayState } from '../../infra/state.ts';
import { policyDocuments } from '../support/iam-policies.ts';
import { viewerFunction } from '../support/viewer-function.ts';

let template: Template;
let state: SlipwayState;

beforeAll(() => {
  const app = scratchApp({ context: { '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true } });
  const stack = new Stack(app, 'SitesTest', { env: { account: '111111111111', region: 'eu-west-1' } });
  state = new SlipwayState(stack, 'State');
  new SiteServing(stack, 'Sites', {
    grants: { state, mailFrom: 'noreply@example.site' },
    environment: { SITE_DOMAIN: 'example.site' },
    siteDomain: 'example.site',
    certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/0000',
  });
  // cdk-nag fails synthesis on any finding not acknowledged with a reason.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  app.synth();
  template = Template.fromStack(stack);
}, 120_000);

describe('site serving in the cloud', () => {
  it('CloudFront answers *.{site_domain}, redirects HTTP to HTTPS, takes every method and caches GET and HEAD only', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['*.example.site', '*.previews.example.site'],
        ViewerCertificate: Match.objectLike({
          AcmCertificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/0000',
          SslSupportMethod: 'sni-only',
        }),
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'redirect-to-https',
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
          CachedMethods: ['GET', 'HEAD'],
          FunctionAssociations: [Match.objectLike({ EventType: 'viewer-request' })],
        }),
      }),
    });
  });

  it("the viewer function makes the site host the custom hostname a domain's distribution names, else the viewer Host", () => {
    const functions = Object.values(template.findResources('AWS::CloudFront::Function')) as { Properties: { FunctionCode: string } }[];
    expect(functions).toHaveLength(1);
    // Run as the synthesized mode's CloudFront runs it, with the distribution's origins.
    const origins = template.toJSON().Resources;
    const distribution = Object.values(origins).find((r: any) => r.Type === 'AWS::CloudFront::Distribution') as any;
    const originIds = distribution.Properties.DistributionConfig.Origins.map((o: { Id: string }) => o.Id);
    const run = viewerFunction(functions[0]!.Properties.FunctionCode, originIds);
    const viewer = run({ method: 'GET', headers: { host: { value: 'shop.example.site' } } });
    expect(viewer.result.headers['x-slipway-host']).toEqual({ value: 'shop.example.site' });
    expect(viewer.selected).toEqual([]);
    const chained = run({
      method: 'HEAD',
      headers: { host: { value: 'shop.example.site' }, 'x-slipway-custom-host': { value: 'www.example.com' } },
    });
    expect(chained.result.headers['x-slipway-host']).toEqual({ value: 'www.example.com' });
    expect(chained.selected).toEqual([]);
    // Every other method goes to the URL that takes an unsigned body.
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const other = run({ method, headers: { host: { value: 'shop.example.site' } } });
      expect(other.selected, method).toEqual([SITE_OTHER_METHODS_ORIGIN_ID]);
      expect(other.result.headers['x-slipway-host']).toEqual({ value: 'shop.example.site' });
    }
    // The function applies no geo rule itself in the cloud: the domain's distribution did.
    const serve = Object.values(template.findResources('AWS::Lambda::Function')).find((f) =>
      JSON.stringify(f).includes('serves the live deployment'),
    ) as {
      Properties: { Environment: { Variables: Record<string, string> } };
    };
    expect(serve.Properties.Environment.Variables.GEO_RULES_AT_EDGE).toBe('true');
  });

  it('the origin is the serve-site function URL, IAM-authenticated through origin access control, streaming', () => {
    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM' });
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: Match.objectLike({ OriginAccessControlOriginType: 'lambda', SigningBehavior: 'always' }),
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      Principal: 'cloudfront.amazonaws.com',
    });
  });

  it('methods but GET and HEAD: a public streaming URL whose origin sends the generated secret, which only that function reads', () => {
    template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'NONE', InvokeMode: 'RESPONSE_STREAM' });
    const resources = template.toJSON().Resources as Record<string, any>;
    const distribution = Object.values(resources).find((r) => r.Type === 'AWS::CloudFront::Distribution');
    const [, other] = distribution.Properties.DistributionConfig.Origins;
    expect(other.Id).toBe(SITE_OTHER_METHODS_ORIGIN_ID);
    // No origin access control: it would sign only a body whose sha256 the viewer declared.
    expect(other.OriginAccessControlId).toBeUndefined();
    expect(other.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only', OriginReadTimeout: 30 });
    const secretId = Stack.of(state).getLogicalId(state.secrets.siteOrigin.node.defaultChild as any);
    // A dynamic reference: CloudFormation resolves the value at deploy, the template never holds it.
    expect(other.OriginCustomHeaders).toEqual([
      {
        HeaderName: 'x-slipway-origin-secret',
        HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']] },
      },
    ]);
    const readers = policyDocuments(resources)
      .filter((p) => p.statements.some((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue')))
      .map((p) => p.id);
    expect(readers).toHaveLength(1);
    expect(readers[0]).toContain('ServeSiteOtherMethods');
    const otherFunction = Object.values(resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && JSON.stringify(r).includes('methods other than GET and HEAD'),
    );
    expect(otherFunction.Properties.Environment.Variables.SITE_ORIGIN_SECRET_ARN).toEqual({ Ref: secretId });
    expect(otherFunction.Properties.Environment.Variables.SITE_ORIGIN_SECRET).toBeUndefined();
  });

  it('caches by site host, path and query (a primary-domain redirect keeps the query), revalidating by ETag (TTL floor 0)', () => {
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        DefaultTTL: 0,
        MinTTL: 0,
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['x-slipway-host'] },
          QueryStringsConfig: { QueryStringBehavior: 'all' },
        }),
        // At least the 30 days a primary-domain redirect asks for (max-age=2592000).
        MaxTTL: 31_536_000,
      }),
    });
  });

  it('the function may only read the table and the sites bucket, and update site analytics rows', () => {
    const statements = policyDocuments(template.toJSON().Resources)
      .filter((p) => p.id.includes('ServeSite'))
      .flatMap((p) => p.statements)
      .filter((s) => [s.Action].flat()[0] !== 'secretsmanager:GetSecretValue');
    const actions = statements.flatMap((s) => [s.Action].flat());
    expect(actions.length).toBeGreaterThan(0);
    for (const action of actions) {
      expect(action).toMatch(
        /^(dynamodb:(GetItem|BatchGetItem|Query|ConditionCheckItem|UpdateItem)|s3:(GetObject|ListBucket)|logs:(CreateLogStream|PutLogEvents))$/,
      );
    }
    const updates = statements.filter((s) => [s.Action].flat().includes('dynamodb:UpdateItem'));
    // Each of the two functions (GET and HEAD; every other method).
    expect(updates).toHaveLength(2);
    expect(updates[0]!.Action).toBe('dynamodb:UpdateItem');
    expect(updates[1]!.Condition).toEqual(updates[0]!.Condition);
    expect(updates[0]!.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ANALYTICS#*'] } });
  });
});

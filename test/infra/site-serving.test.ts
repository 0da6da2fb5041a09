import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { SiteServing } from '../../infra/site-serving.ts';
import { SlipwayState } from '../../infra/state.ts';
import { policyDocuments } from '../support/iam-policies.ts';

let template: Template;

beforeAll(() => {
  const app = new App({ context: { '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true } });
  const stack = new Stack(app, 'SitesTest', { env: { account: '111111111111', region: 'eu-west-1' } });
  const state = new SlipwayState(stack, 'State');
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
  it('CloudFront answers *.{site_domain}, redirects HTTP to HTTPS, GET and HEAD only', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['*.example.site', '*.previews.example.site'],
        ViewerCertificate: Match.objectLike({
          AcmCertificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/0000',
          SslSupportMethod: 'sni-only',
        }),
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'redirect-to-https',
          AllowedMethods: ['GET', 'HEAD'],
          FunctionAssociations: [Match.objectLike({ EventType: 'viewer-request' })],
        }),
      }),
    });
  });

  it("the viewer function makes the site host the custom hostname a domain's distribution names, else the viewer Host", () => {
    const functions = Object.values(template.findResources('AWS::CloudFront::Function')) as { Properties: { FunctionCode: string } }[];
    expect(functions).toHaveLength(1);
    // CloudFront Functions run this JavaScript as is: run it here on the event shapes CloudFront gives.
    const handler = new Function(`${functions[0]!.Properties.FunctionCode}\nreturn handler;`)() as (event: unknown) => {
      headers: Record<string, { value: string }>;
    };
    const viewer = handler({ request: { headers: { host: { value: 'shop.example.site' } } } });
    expect(viewer.headers['x-slipway-host']).toEqual({ value: 'shop.example.site' });
    const chained = handler({
      request: { headers: { host: { value: 'shop.example.site' }, 'x-slipway-custom-host': { value: 'www.example.com' } } },
    });
    expect(chained.headers['x-slipway-host']).toEqual({ value: 'www.example.com' });
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
      .flatMap((p) => p.statements);
    const actions = statements.flatMap((s) => [s.Action].flat());
    expect(actions.length).toBeGreaterThan(0);
    for (const action of actions) {
      expect(action).toMatch(
        /^(dynamodb:(GetItem|BatchGetItem|Query|ConditionCheckItem|UpdateItem)|s3:(GetObject|ListBucket)|logs:(CreateLogStream|PutLogEvents))$/,
      );
    }
    const updates = statements.filter((s) => [s.Action].flat().includes('dynamodb:UpdateItem'));
    expect(updates).toHaveLength(1);
    expect(updates[0]!.Action).toBe('dynamodb:UpdateItem');
    expect(updates[0]!.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ANALYTICS#*'] } });
  });
});

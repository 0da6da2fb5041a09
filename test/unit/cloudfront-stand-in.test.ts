import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answerThroughDistribution,
  resolveDynamicReferences,
  resolveOriginHeaders,
  templateDistributions,
  type TemplateDistribution,
} from '../../local-cloud/cloudfront/cloudfront.ts';
import type { LambdaFunctionHost } from '../../local-cloud/lambda/lambda-host.ts';
import type { SynthesizedTemplate } from '../../local-cloud/template/template.ts';

/**
 * The synthesized mode's CloudFront is as strict as CloudFront and Lambda: a method the behavior does not allow is
 * CloudFront's 403 before any function, and a function URL with AWS_IAM auth behind origin access control takes a
 * body only when the viewer declared its sha256 (Lambda accepts no unsigned payload). The sites distribution's design
 * (infra/site-serving.ts) is proven against these rules by test/integration/serving-rules.test.ts in the synth project.
 */
const urlOf = (id: string) => ({ 'Fn::Select': [2, { 'Fn::Split': ['/', { 'Fn::GetAtt': [id, 'FunctionUrl'] }] }] });

function template(options: { allowedMethods?: string[]; viewerCode?: string; oac?: boolean }): SynthesizedTemplate {
  const { allowedMethods, viewerCode, oac = true } = options;
  return {
    assemblyDir: '/nowhere',
    stackName: 'Stand',
    resources: {
      SignedFn: { Type: 'AWS::Lambda::Function', Properties: {} },
      OpenFn: { Type: 'AWS::Lambda::Function', Properties: {} },
      SignedUrl: {
        Type: 'AWS::Lambda::Url',
        Properties: { AuthType: 'AWS_IAM', TargetFunctionArn: { 'Fn::GetAtt': ['SignedFn', 'Arn'] } },
      },
      OpenUrl: { Type: 'AWS::Lambda::Url', Properties: { AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': ['OpenFn', 'Arn'] } } },
      Control: {
        Type: 'AWS::CloudFront::OriginAccessControl',
        Properties: { OriginAccessControlConfig: { OriginAccessControlOriginType: 'lambda', SigningBehavior: 'always' } },
      },
      ...(viewerCode ? { Viewer: { Type: 'AWS::CloudFront::Function', Properties: { FunctionCode: viewerCode } } } : {}),
      Dist: {
        Type: 'AWS::CloudFront::Distribution',
        Metadata: { 'aws:cdk:path': 'Stand/Sites/Distribution/Resource' },
        Properties: {
          DistributionConfig: {
            Origins: [
              {
                Id: 'signed',
                DomainName: urlOf('SignedUrl'),
                ...(oac ? { OriginAccessControlId: { 'Fn::GetAtt': ['Control', 'Id'] } } : {}),
              },
              {
                Id: 'open',
                DomainName: urlOf('OpenUrl'),
                OriginCustomHeaders: [
                  { HeaderName: 'X-Origin-Secret', HeaderValue: '{{resolve:secretsmanager:arn:local:secret:s:SecretString:::}}' },
                ],
              },
            ],
            DefaultCacheBehavior: {
              TargetOriginId: 'signed',
              ...(allowedMethods ? { AllowedMethods: allowedMethods } : {}),
              ...(viewerCode
                ? { FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': ['Viewer', 'FunctionARN'] } }] }
                : {}),
            },
          },
        },
      },
    },
  };
}

const ALL = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'];
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const invoked: { fn: string; headers: Record<string, string>; body?: string }[] = [];
const lambdaOf = (fn: string) =>
  ({
    invoke: async (event: { headers: Record<string, string>; body?: string; isBase64Encoded: boolean }) => {
      const body = event.body === undefined ? undefined : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8').toString();
      invoked.push({ fn, headers: event.headers, body });
      return {
        head: { statusCode: 200, headers: { 'content-type': 'text/plain' } },
        body: Readable.from([Buffer.from(`served by ${fn}`)]),
      };
    },
  }) as unknown as LambdaFunctionHost;

let server: Server;
let base: string;
let distribution: TemplateDistribution;

async function serve(t: SynthesizedTemplate) {
  distribution = templateDistributions(t)[0]!;
  await resolveOriginHeaders([distribution], async (value) =>
    resolveDynamicReferences(String(value), async (arn) => (arn === 'arn:local:secret:s' ? 'the-secret' : 'wrong')),
  );
  invoked.length = 0;
}

const send = async (method: string, body?: string, headers: Record<string, string> = {}) => {
  const reply = await fetch(`${base}/form`, { method, body, headers });
  return { status: reply.status, type: reply.headers.get('x-amzn-errortype'), text: await reply.text() };
};

beforeAll(async () => {
  server = createServer((req, res) => void answerThroughDistribution(req, res, distribution, lambdaOf));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server?.close());

describe("the synthesized mode's CloudFront: a behavior's AllowedMethods", () => {
  it('a method the behavior does not allow (GET and HEAD by default) is 403 before any function or origin', async () => {
    await serve(template({}));
    expect(distribution.allowedMethods).toEqual(['GET', 'HEAD']);
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const reply = await send(method, method === 'OPTIONS' ? undefined : 'a=1');
      expect(reply.status, method).toBe(403);
      expect(reply.text).toBe(
        '403 ERROR: This distribution is not configured to allow the HTTP request method that was used for this request. The distribution supports only cachable requests.',
      );
    }
    expect(invoked).toEqual([]);
    expect((await send('GET')).status).toBe(200);
    expect(invoked.map((i) => i.fn)).toEqual(['SignedFn']);
  });
});

describe("the synthesized mode's CloudFront: a Lambda function URL origin's auth", () => {
  it('behind origin access control a body needs its sha256 declared (a form post is 403); without a body nothing is needed', async () => {
    await serve(template({ allowedMethods: ALL }));
    const form = await send('POST', 'email=a%40example.com', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(403);
    expect(form.type).toBe('InvalidSignatureException');
    expect(JSON.parse(form.text).message).toMatch(/^The request signature we calculated does not match the signature you provided\./);
    const wrong = await send('PUT', 'a=1', { 'x-amz-content-sha256': sha256('a=2') });
    expect([wrong.status, wrong.type]).toEqual([403, 'InvalidSignatureException']);
    const unsigned = await send('POST', 'a=1', { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' });
    expect([unsigned.status, unsigned.type]).toEqual([403, 'InvalidSignatureException']);
    expect(invoked).toEqual([]);
    expect((await send('POST', 'a=1', { 'x-amz-content-sha256': sha256('a=1') })).status).toBe(200);
    expect((await send('DELETE')).status).toBe(200);
    expect(invoked.map((i) => i.fn)).toEqual(['SignedFn', 'SignedFn']);
  });

  it('an AWS_IAM function URL without origin access control is 403 Forbidden to every request', async () => {
    await serve(template({ oac: false }));
    const reply = await send('GET');
    expect([reply.status, reply.type, reply.text]).toEqual([403, 'AccessDeniedException', '{"Message":"Forbidden"}']);
    expect(invoked).toEqual([]);
  });

  it('a public URL the viewer function selects takes any body, with the origin headers resolved (a secret by its dynamic reference)', async () => {
    const viewerCode = [
      "import cf from 'cloudfront';",
      'function handler(event) {',
      "  if (event.request.method !== 'GET') cf.selectRequestOriginById('open');",
      '  return event.request;',
      '}',
    ].join('\n');
    await serve(template({ allowedMethods: ALL, viewerCode }));
    const reply = await send('POST', 'a=1', { 'content-type': 'application/x-www-form-urlencoded', 'x-origin-secret': 'forged' });
    expect([reply.status, reply.text]).toEqual([200, 'served by OpenFn']);
    // The origin's header replaces the viewer's of the same name.
    expect(invoked[0]!.headers['x-origin-secret']).toBe('the-secret');
    expect(invoked[0]!.body).toBe('a=1');
    expect((await send('GET')).text).toBe('served by SignedFn');
    expect(invoked[1]!.headers['x-origin-secret']).toBeUndefined();
  });

  it('resolves a Secrets Manager dynamic reference (a JSON field too); any other dynamic reference is an error', async () => {
    const secrets = async (arn: string) => (arn.endsWith(':json') ? '{"key":"from-json"}' : `value of ${arn}`);
    expect(
      await resolveDynamicReferences('a{{resolve:secretsmanager:arn:aws:secretsmanager:r:1:secret:x-AbC:SecretString:::}}b', secrets),
    ).toBe('avalue of arn:aws:secretsmanager:r:1:secret:x-AbCb');
    expect(await resolveDynamicReferences('{{resolve:secretsmanager:arn:s:json:SecretString:key::}}', secrets)).toBe('from-json');
    await expect(resolveDynamicReferences('{{resolve:ssm:/param:1}}', secrets)).rejects.toThrow(
      'A dynamic reference the local platform cannot resolve: {{resolve:ssm:/param:1}}',
    );
  });
});

import { jsonBody, UnmappedRequestError, type ArnContext, type AuthorizationCheck, type WireRequest } from './iam-requests.ts';

const params = (url: URL) => url.searchParams;

function s3Checks(request: WireRequest): AuthorizationCheck[] {
  const [bucket, ...rest] = request.url.pathname.slice(1).split('/');
  const key = rest.map((part) => decodeURIComponent(part)).join('/');
  const q = params(request.url);
  const bucketArn = `arn:aws:s3:::${bucket}`;
  const objectArn = `${bucketArn}/${key}`;
  const method = request.method;
  if (!bucket) return [{ action: 's3:ListAllMyBuckets', resource: '*' }];
  if (!key) {
    if (method === 'POST' && q.has('delete')) {
      const keys = [...request.body.toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) =>
        m[1]!.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>'),
      );
      return keys.map((k) => ({ action: 's3:DeleteObject', resource: `${bucketArn}/${k}` }));
    }
    if (method === 'GET' && q.has('versions')) return [{ action: 's3:ListBucketVersions', resource: bucketArn }];
    if (method === 'GET' && q.has('uploads')) return [{ action: 's3:ListBucketMultipartUploads', resource: bucketArn }];
    if (method === 'GET' && q.has('location')) return [{ action: 's3:GetBucketLocation', resource: bucketArn }];
    if (method === 'GET' || method === 'HEAD') return [{ action: 's3:ListBucket', resource: bucketArn }];
    if (method === 'PUT') return [{ action: 's3:CreateBucket', resource: bucketArn }];
    if (method === 'DELETE') return [{ action: 's3:DeleteBucket', resource: bucketArn }];
    throw new UnmappedRequestError(`s3 ${method} on a bucket is not mapped`);
  }
  if (method === 'GET' && q.has('uploadId')) return [{ action: 's3:ListMultipartUploadParts', resource: objectArn }];
  if (method === 'GET' && q.has('tagging')) return [{ action: 's3:GetObjectTagging', resource: objectArn }];
  if (method === 'GET' || method === 'HEAD')
    return [{ action: q.has('versionId') ? 's3:GetObjectVersion' : 's3:GetObject', resource: objectArn }];
  if (method === 'DELETE' && q.has('uploadId')) return [{ action: 's3:AbortMultipartUpload', resource: objectArn }];
  if (method === 'DELETE') return [{ action: q.has('versionId') ? 's3:DeleteObjectVersion' : 's3:DeleteObject', resource: objectArn }];
  if (method === 'PUT' && q.has('tagging')) return [{ action: 's3:PutObjectTagging', resource: objectArn }];
  if (method === 'PUT' || method === 'POST') {
    const checks: AuthorizationCheck[] = [{ action: 's3:PutObject', resource: objectArn }];
    const source = request.headers['x-amz-copy-source'];
    if (typeof source === 'string')
      checks.push({ action: 's3:GetObject', resource: `arn:aws:s3:::${decodeURIComponent(source.replace(/^\//, '').split('?')[0]!)}` });
    return checks;
  }
  throw new UnmappedRequestError(`s3 ${method} on an object is not mapped`);
}

function schedulerChecks(request: WireRequest, ctx: ArnContext): AuthorizationCheck[] {
  const match = /^\/schedules(?:\/([^/]+))?$/.exec(request.url.pathname);
  if (!match) throw new UnmappedRequestError(`scheduler ${request.method} ${request.url.pathname} is not mapped`);
  if (!match[1]) return [{ action: 'scheduler:ListSchedules', resource: '*' }];
  const body = jsonBody(request);
  const group = params(request.url).get('groupName') ?? body.GroupName ?? 'default';
  const resource = `arn:aws:scheduler:${ctx.region}:${ctx.accountId}:schedule/${group}/${decodeURIComponent(match[1])}`;
  const action = { POST: 'CreateSchedule', PUT: 'UpdateSchedule', DELETE: 'DeleteSchedule', GET: 'GetSchedule' }[request.method];
  if (!action) throw new UnmappedRequestError(`scheduler ${request.method} is not mapped`);
  const checks: AuthorizationCheck[] = [{ action: `scheduler:${action}`, resource }];
  if (body.Target?.RoleArn) {
    checks.push({ action: 'iam:PassRole', resource: body.Target.RoleArn, context: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
  }
  return checks;
}

function sesChecks(request: WireRequest, ctx: ArnContext): AuthorizationCheck[] {
  if (request.method !== 'POST' || request.url.pathname !== '/v2/email/outbound-emails') {
    throw new UnmappedRequestError(`ses ${request.method} ${request.url.pathname} is not mapped`);
  }
  const from = String(jsonBody(request).FromEmailAddress ?? '').replace(/^.*<([^>]+)>.*$/, '$1');
  const identity = (name: string) => ({ action: 'ses:SendEmail', resource: `arn:aws:ses:${ctx.region}:${ctx.accountId}:identity/${name}` });
  // SES authorizes against the verified identity that covers the sender: the address itself, or its domain.
  return [{ ...identity(from), anyOf: [identity(from), identity(from.slice(from.indexOf('@') + 1))] }];
}

function lambdaChecks(request: WireRequest, ctx: ArnContext): AuthorizationCheck[] {
  const path = request.url.pathname;
  const arnOf = (name: string) => (name.startsWith('arn:') ? name : `arn:aws:lambda:${ctx.region}:${ctx.accountId}:function:${name}`);
  if (request.method === 'POST' && /^\/2015-03-31\/functions\/?$/.test(path)) {
    const body = jsonBody(request);
    const vpcs = [...new Set((body.VpcConfig?.SubnetIds ?? []).map((s: string) => ctx.subnetVpc(s) ?? s))] as string[];
    const checks: AuthorizationCheck[] = [
      {
        action: 'lambda:CreateFunction',
        resource: arnOf(body.FunctionName),
        context: {
          'lambda:VpcIds': vpcs,
          'lambda:SecurityGroupIds': body.VpcConfig?.SecurityGroupIds ?? [],
          'lambda:Layer': body.Layers ?? [],
        },
      },
      { action: 'iam:PassRole', resource: String(body.Role), context: { 'iam:PassedToService': 'lambda.amazonaws.com' } },
      // What Lambda checks with the caller's own rights besides: each layer's GetLayerVersion, and for a function in
      // a VPC the caller's read of that network (Lambda's "permissions for VPC-connected functions").
      ...((body.Layers ?? []) as string[]).map((layer) => ({ action: 'lambda:GetLayerVersion', resource: layer })),
      ...(body.VpcConfig?.SubnetIds?.length
        ? ['ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'].map((action) => ({ action, resource: '*' }))
        : []),
    ];
    if (body.Tags && Object.keys(body.Tags).length)
      checks.push({ action: 'lambda:TagResource', resource: arnOf(body.FunctionName), context: { 'aws:TagKeys': Object.keys(body.Tags) } });
    return checks;
  }
  // ListFunctions has no resource scope; ListTags names the function's ARN.
  if (request.method === 'GET' && /^\/2015-03-31\/functions\/?$/.test(path)) return [{ action: 'lambda:ListFunctions', resource: '*' }];
  const tags = /^\/2017-03-31\/tags\/(.+)$/.exec(path);
  if (request.method === 'GET' && tags) return [{ action: 'lambda:ListTags', resource: decodeURIComponent(tags[1]!) }];
  const fn = /^\/\d{4}-\d\d-\d\d\/functions\/([^/]+)(\/.*)?$/.exec(path);
  if (fn) {
    const resource = arnOf(decodeURIComponent(fn[1]!));
    const tail = fn[2] ?? '';
    if (tail === '/invocations' || tail === '/response-streaming-invocations') return [{ action: 'lambda:InvokeFunction', resource }];
    if (request.method === 'GET' && (tail === '' || tail === '/')) return [{ action: 'lambda:GetFunction', resource }];
    if (request.method === 'GET' && tail === '/configuration') return [{ action: 'lambda:GetFunctionConfiguration', resource }];
    if (request.method === 'DELETE' && tail === '') return [{ action: 'lambda:DeleteFunction', resource }];
  }
  const layer = /^\/2018-10-31\/layers\/([^/]+)\/versions\/(\d+)$/.exec(path);
  if (layer)
    return [{ action: 'lambda:GetLayerVersion', resource: `arn:aws:lambda:${ctx.region}:${ctx.accountId}:layer:${layer[1]}:${layer[2]}` }];
  throw new UnmappedRequestError(`lambda ${request.method} ${path} is not mapped`);
}

function route53Checks(request: WireRequest): AuthorizationCheck[] {
  const path = request.url.pathname.replace(/^\/2013-04-01/, '');
  const zone = /^\/hostedzone\/([^/]+)(\/rrset)?\/?$/.exec(path);
  if (path === '/hostedzone' || path === '/hostedzone/') {
    return [{ action: request.method === 'POST' ? 'route53:CreateHostedZone' : 'route53:ListHostedZones', resource: '*' }];
  }
  if (zone) {
    const resource = `arn:aws:route53:::hostedzone/${zone[1]}`;
    if (zone[2])
      return [{ action: request.method === 'POST' ? 'route53:ChangeResourceRecordSets' : 'route53:ListResourceRecordSets', resource }];
    return [{ action: request.method === 'DELETE' ? 'route53:DeleteHostedZone' : 'route53:GetHostedZone', resource }];
  }
  const change = /^\/change\/([^/]+)$/.exec(path);
  if (change) return [{ action: 'route53:GetChange', resource: `arn:aws:route53:::change/${change[1]}` }];
  throw new UnmappedRequestError(`route53 ${request.method} ${request.url.pathname} is not mapped`);
}

function cloudfrontChecks(request: WireRequest, ctx: ArnContext): AuthorizationCheck[] {
  const path = request.url.pathname.replace(/^\/\d{4}-\d\d-\d\d/, '');
  const arn = (id: string) => `arn:aws:cloudfront::${ctx.accountId}:distribution/${id}`;
  if (path === '/distribution') {
    // A distribution being created has no id yet: IAM evaluates the account's distributions.
    return request.method === 'POST'
      ? [{ action: 'cloudfront:CreateDistribution', resource: arn('*') }]
      : [{ action: 'cloudfront:ListDistributions', resource: '*' }];
  }
  const match = /^\/distribution\/([^/]+)(\/config)?$/.exec(path);
  if (!match) throw new UnmappedRequestError(`cloudfront ${request.method} ${request.url.pathname} is not mapped`);
  const resource = arn(match[1]!);
  if (match[2])
    return [{ action: request.method === 'PUT' ? 'cloudfront:UpdateDistribution' : 'cloudfront:GetDistributionConfig', resource }];
  return [{ action: request.method === 'DELETE' ? 'cloudfront:DeleteDistribution' : 'cloudfront:GetDistribution', resource }];
}

/** REST protocols: the operation is the method and the path. */
export function restProtocolChecks(request: WireRequest, ctx: ArnContext): AuthorizationCheck[] {
  switch (request.service) {
    case 's3':
      return s3Checks(request);
    case 'scheduler':
      return schedulerChecks(request, ctx);
    case 'ses':
      return sesChecks(request, ctx);
    case 'lambda':
      return lambdaChecks(request, ctx);
    case 'route53':
      return route53Checks(request);
    case 'cloudfront':
      return cloudfrontChecks(request, ctx);
    default:
      throw new UnmappedRequestError(`${request.service} ${request.method} ${request.url.pathname} is not mapped`);
  }
}

import { ArnFormat, CfnOutput, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { cloudHostVariables } from '../lib/functions/hosts/cloud/variables.ts';
import { stagedBodyPrefix } from '../lib/resources.ts';
import { SITE_HOST_HEADER } from '../lib/sites/serve.ts';
import { HandlerFunction } from './functions.ts';
import { computeSubnets } from './functions-network.ts';
import { DOOR_ORIGIN_ID, functionsViewerCode } from './functions-viewer.ts';
import { acknowledge, type GrantContext } from './grants.ts';

/** What the router and its distribution are made from (the FunctionsRuntime's props). */
export interface RouterProps {
  grants: GrantContext;
  environment: Record<string, string>;
  functionDomain: string;
  certificateArn?: string;
}

/** What a user-function Lambda is made from: the functions runtime's parts. */
export interface UserFunctionParts {
  functionNamePrefix: string;
  userFunctionRole: iam.Role;
  runnerLayer: lambda.LayerVersion;
  vpc: ec2.Vpc;
  computeSecurityGroup: ec2.SecurityGroup;
}

/** The variables the cloud host makes a user-function Lambda with (lib/functions/hosts/cloud/lambda-prepare.ts). */
export function userFunctionVariables(made: UserFunctionParts): Record<string, string> {
  return {
    [cloudHostVariables.namePrefix]: made.functionNamePrefix,
    [cloudHostVariables.roleArn]: made.userFunctionRole.roleArn,
    [cloudHostVariables.runnerLayerArn]: made.runnerLayer.layerVersionArn,
    [cloudHostVariables.subnetIds]: made.vpc.selectSubnets(computeSubnets).subnetIds.join(','),
    [cloudHostVariables.securityGroupId]: made.computeSecurityGroup.securityGroupId,
  };
}

/** Every user-function Lambda: the functions under the stack's prefix. */
const userFunctionsArn = (stack: Stack, prefix: string) =>
  stack.formatArn({ service: 'lambda', resource: 'function', resourceName: `${prefix}*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });

/**
 * What making a user-function Lambda takes (lambda-prepare.ts: GetFunction, CreateFunction with its tags, the wait
 * until Active), granted alike to the router (the fallback on a request) and the function-lambdas worker (at
 * publish): only under the stack's prefix, only in the compute VPC and group with the runner layer, passing only
 * the user-function role.
 */
export function grantMakeUserFunctions(role: iam.IRole, stack: Stack, made: UserFunctionParts): void {
  const userFunctions = userFunctionsArn(stack, made.functionNamePrefix);
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['lambda:GetFunction'], resources: [userFunctions] }));
  // A function the router makes is in the compute VPC, behind the compute group, with the runner layer.
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['lambda:CreateFunction'],
      resources: [userFunctions],
      conditions: {
        StringEquals: { 'lambda:VpcIds': made.vpc.vpcId },
        'ForAllValues:StringEquals': {
          'lambda:SecurityGroupIds': [made.computeSecurityGroup.securityGroupId],
          'lambda:Layer': [made.runnerLayer.layerVersionArn],
        },
      },
    }),
  );
  // The `slipway:*` tags a new function carries (the sweep reads them). Lambda authorizes them as TagResource,
  // whose request has no lambda:VpcIds, lambda:SecurityGroupIds or lambda:Layer: under the statement above
  // it would be refused, and so would every CreateFunction (the synthesized mode's IAM check found it).
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['lambda:TagResource'],
      resources: [userFunctions],
      conditions: { 'ForAllValues:StringLike': { 'aws:TagKeys': ['slipway:*'] } },
    }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['lambda:GetLayerVersion'], resources: [made.runnerLayer.layerVersionArn] }),
  );
  // Lambda checks the VPC configuration of a new function with the caller's EC2 read rights.
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs'], resources: ['*'] }),
  );
  made.userFunctionRole.grantPassRole(role);
  Validations.of(role).acknowledge({
    // cdk-nag names the finding by the ARN as rendered: pseudo parameters unless the stack has a fixed environment.
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:${Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region}:${Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account}:function:${made.functionNamePrefix}*]`,
    reason:
      "One Lambda per built function is made (and invoked by the router), named at run time under the stack's prefix, so the grant covers " +
      'that prefix only; creation is further bound to the compute VPC, security group and runner layer.',
  });
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      "Lambda checks the VPC of a function being created with the caller's ec2:DescribeSecurityGroups, DescribeSubnets and DescribeVpcs, " +
      'which EC2 cannot scope to resources; they read network configuration only.',
  });
}

/**
 * What the door's table and bucket access is (its `uses`): it resolves hosts, counts telemetry and holds request slots
 * (table), and reads a bundle to make its function's Lambda. The router and the container door hold the same.
 */
export const doorUses = ['table:read', 'table:write', 'bundles:read', 'tails:send'] as const;

/**
 * The door's calls beyond its `uses`, granted alike to the router and the container door's task role: invoking and
 * making user-function Lambdas, staging large request bodies.
 */
export function grantDoorCalls(role: iam.Role, stack: Stack, made: UserFunctionParts, bundles: s3.Bucket): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [userFunctionsArn(stack, made.functionNamePrefix)] }),
  );
  grantMakeUserFunctions(role, stack, made);
  grantBodyStaging(role, bundles);
}

/** The router (handlers/edge/functions-router.ts) and its function URL: it makes and invokes one Lambda per built function. */
export function functionsRouter(scope: Construct, props: RouterProps, stack: Stack, made: UserFunctionParts) {
  // --- The HTTPS door: CloudFront, the router, one Lambda per function -----------------------
  const router = new HandlerFunction(scope, 'Router', {
    handler: 'handlers/edge/functions-router.ts',
    description: 'Slipway: the functions HTTPS door for {name}-{subdomain}.{function_domain}',
    uses: doorUses,
    // The 60 s budget, plus making a new function's Lambda on its first request.
    timeoutSeconds: 180,
    memoryMb: 1024,
    environment: { ...props.environment, ...userFunctionVariables(made) },
    grants: props.grants,
  });
  grantDoorCalls(router.role, stack, made, props.grants.state.buckets.bundles);

  // Public by the spec (anyone may call a function). Origin access control would make every POST
  // caller sign its body (x-amz-content-sha256), which an arbitrary HTTP client does not do.
  const routerUrl = router.fn.addFunctionUrl({
    authType: lambda.FunctionUrlAuthType.NONE,
    invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
  });

  return { router, routerUrl };
}

/**
 * Staging a request body too large for a user-function Lambda's payload (lib/functions/hosts/cloud/body-staging.ts):
 * writing and deleting objects under the staging prefix only. Its presigned GET acts with the signer's rights: the
 * bundles bucket's read, which the router holds already (`bundles:read`) to make a function's Lambda.
 */
export function grantBodyStaging(role: iam.Role, bundles: s3.Bucket): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:DeleteObject'], resources: [bundles.arnForObjects(`${stagedBodyPrefix}*`)] }),
  );
  const bucketId = Stack.of(bundles).getLogicalId(bundles.node.defaultChild as s3.CfnBucket);
  acknowledge(
    role,
    `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${stagedBodyPrefix}*]`,
    'Each staged body gets a key made at run time (function id, random id) under the staging prefix; the grant covers that prefix only.',
  );
}

/**
 * CloudFront in front of the router for *.{function_domain}, with the container door as a second origin
 * (`doorOrigin`: its CloudFormation Origin, id DOOR_ORIGIN_ID) that only the viewer function chooses.
 */
export function functionsDistribution(scope: Construct, props: RouterProps, routerUrl: lambda.FunctionUrl, doorOrigin: object) {
  const copyHost = new cloudfront.Function(scope, 'CopyFunctionHost', {
    comment: `Door 413 over 10 MiB; viewer Host into ${SITE_HOST_HEADER}; large or undeclared bodies to ${DOOR_ORIGIN_ID}`,
    runtime: cloudfront.FunctionRuntime.JS_2_0,
    code: cloudfront.FunctionCode.fromInline(functionsViewerCode()),
  });
  const certificate = props.certificateArn
    ? acm.Certificate.fromCertificateArn(scope, 'FunctionCertificate', props.certificateArn)
    : undefined;
  const distribution = new cloudfront.Distribution(scope, 'Distribution', {
    comment: `Slipway functions: *.${props.functionDomain}`,
    ...(certificate ? { domainNames: [`*.${props.functionDomain}`], certificate } : {}),
    minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
    httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
    priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
    defaultBehavior: {
      origin: new origins.FunctionUrlOrigin(routerUrl, {
        // CloudFront's longest wait without a quota increase; the door answers 504 at 60 s itself.
        readTimeout: Duration.seconds(60),
      }),
      // The spec: plain HTTP redirects to HTTPS.
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
      // Every call reaches the function: nothing is cached at the edge.
      cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
      originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      compress: false,
      functionAssociations: [{ function: copyHost, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
    },
  });

  // CDK renders only the origins a behavior uses. The door's origin is chosen by the viewer function alone, so no path
  // of a function's URL space is given to it by a behavior's pattern: it is added to the rendered Origins instead.
  (distribution.node.defaultChild as cloudfront.CfnDistribution).addPropertyOverride('DistributionConfig.Origins.1', doorOrigin);

  new CfnOutput(scope, 'FunctionsDistributionDomain', {
    value: distribution.distributionDomainName,
    description: `Point *.${props.functionDomain} (CNAME or alias) at this name`,
  });

  for (const [rule, reason] of [
    [
      'AwsSolutions-CFR1',
      'Functions are public by the spec for every country; geo rules belong to custom domains, which functions do not have.',
    ],
    ['AwsSolutions-CFR2', 'WAF is an operator choice with its own cost; the door bounds bodies (10 MiB) and time (60 s) itself.'],
    ['AwsSolutions-CFR3', 'Access logs would record HTTPS calls, which the spec says are not recorded.'],
    [
      'AwsSolutions-CFR4',
      'With a certificate the policy is TLSv1.2_2021; without one the distribution is only the default cloudfront.net test name.',
    ],
  ] as const) {
    Validations.of(distribution).acknowledge({ id: rule, reason });
  }
  return distribution;
}

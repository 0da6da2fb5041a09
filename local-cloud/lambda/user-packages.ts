import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RUNNER_LAYER_MODULE } from '../../lib/functions/hosts/cloud/lambda-package.ts';
import type { SynthLambda } from './lambda-host.ts';

/** The CreateFunction fields the local Lambda service reads (Lambda's REST-JSON request). */
export interface CreateFunctionRequest {
  FunctionName?: string;
  Runtime?: string;
  Role?: string;
  Handler?: string;
  Description?: string;
  Timeout?: number;
  MemorySize?: number;
  Architectures?: string[];
  Code?: { ZipFile?: string };
  Layers?: string[];
  VpcConfig?: { SubnetIds?: string[]; SecurityGroupIds?: string[] };
  Environment?: { Variables?: Record<string, string> };
  Tags?: Record<string, string>;
}

/** The files of a user-function package, as lib/functions/hosts/cloud/lambda-package.ts makes it. */
const PACKAGE_FILES = ['function.mjs', 'index.mjs'];

/**
 * Why a CreateFunction is not what the cloud host uploads, or null: a Node 22 zip of exactly the entry and
 * the bundle, the entry importing the runner from /opt, the template's runner layer named (and providing it),
 * and a place in the VPC. A package the runtime could not run fails here, at creation, with the reason.
 */
export function checkUserPackage(
  request: CreateFunctionRequest,
  files: Record<string, Uint8Array>,
  layers: Map<string, string>,
): string | null {
  if (request.Runtime !== 'nodejs22.x') return `Runtime ${String(request.Runtime)}: user functions run on nodejs22.x`;
  if (request.Handler !== 'index.handler') return `Handler ${String(request.Handler)}: the package's entry is index.handler`;
  const names = Object.keys(files).sort();
  if (names.join(',') !== PACKAGE_FILES.join(','))
    return `the package holds ${names.join(', ') || 'nothing'}, not ${PACKAGE_FILES.join(' and ')}`;
  const entry = Buffer.from(files['index.mjs']!).toString('utf8');
  if (!entry.includes(JSON.stringify(RUNNER_LAYER_MODULE))) return `index.mjs does not import the runner from ${RUNNER_LAYER_MODULE}`;
  const unknown = (request.Layers ?? []).filter((arn) => !layers.has(arn));
  if (unknown.length) return `Layer ${unknown.join(', ')} is not a layer of the template`;
  const runner = RUNNER_LAYER_MODULE.slice('/opt/'.length);
  if (!(request.Layers ?? []).some((arn) => existsSync(join(layers.get(arn)!, runner)))) return `no layer provides ${RUNNER_LAYER_MODULE}`;
  if (!request.VpcConfig?.SubnetIds?.length || !request.VpcConfig.SecurityGroupIds?.length)
    return 'a user function runs in the compute subnets behind the compute security group: VpcConfig is missing';
  return null;
}

/** The FunctionConfiguration Lambda answers for a function made from this request. */
export function userFunctionConfiguration(request: CreateFunctionRequest, zip: Buffer, arn: string) {
  return {
    FunctionName: String(request.FunctionName),
    FunctionArn: arn,
    Runtime: request.Runtime,
    Role: request.Role,
    Handler: String(request.Handler),
    CodeSize: zip.length,
    Description: request.Description ?? '',
    Timeout: request.Timeout ?? 3,
    MemorySize: request.MemorySize ?? 128,
    LastModified: new Date().toISOString().replace('Z', '+0000'),
    CodeSha256: createHash('sha256').update(zip).digest('base64'),
    Version: '$LATEST',
    VpcConfig: { ...request.VpcConfig, VpcId: 'vpc-local' },
    Environment: { Variables: request.Environment?.Variables ?? {} },
    Layers: (request.Layers ?? []).map((layer) => ({ Arn: layer, CodeSize: 0 })),
    Architectures: request.Architectures ?? ['x86_64'],
    PackageType: 'Zip',
    State: 'Active',
    LastUpdateStatus: 'Successful',
  };
}

/** How the synthesized mode runs it: its package folder, its layers' folders at /opt, Lambda's own variables only. */
export function userLambdaOf(
  configuration: ReturnType<typeof userFunctionConfiguration>,
  dir: string,
  options: { region: string; layers: Map<string, string> },
): SynthLambda {
  const name = configuration.FunctionName;
  return {
    logicalId: name,
    name,
    arn: configuration.FunctionArn,
    assetDir: dir,
    handler: configuration.Handler,
    timeoutSeconds: configuration.Timeout,
    memoryMb: configuration.MemorySize,
    // The function's own (empty) variables and what the Lambda runtime sets: no platform setting, no credentials
    // (the user-function role grants nothing).
    environment: {
      ...configuration.Environment.Variables,
      AWS_REGION: options.region,
      AWS_DEFAULT_REGION: options.region,
      AWS_LAMBDA_FUNCTION_NAME: name,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(configuration.MemorySize),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      LAMBDA_TASK_ROOT: dir,
      TZ: 'UTC',
      PATH: '/usr/local/bin:/usr/bin:/bin',
    },
    roleLogicalId: 'user-function',
    layers: configuration.Layers.map((layer) => options.layers.get(layer.Arn)!),
  };
}

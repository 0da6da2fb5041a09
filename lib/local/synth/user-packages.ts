import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RUNNER_LAYER_MODULE } from '../../functions/hosts/cloud/lambda-package.ts';

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
export function checkUserPackage(request: CreateFunctionRequest, files: Record<string, Uint8Array>, layers: Map<string, string>): string | null {
  if (request.Runtime !== 'nodejs22.x') return `Runtime ${String(request.Runtime)}: user functions run on nodejs22.x`;
  if (request.Handler !== 'index.handler') return `Handler ${String(request.Handler)}: the package's entry is index.handler`;
  const names = Object.keys(files).sort();
  if (names.join(',') !== PACKAGE_FILES.join(',')) return `the package holds ${names.join(', ') || 'nothing'}, not ${PACKAGE_FILES.join(' and ')}`;
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

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { functionPackage, storedZip } from '../../lib/functions/hosts/cloud/lambda-package.ts';
import { checkUserPackage, type CreateFunctionRequest } from '../../local-cloud/lambda/user-packages.ts';

/**
 * The local Lambda service's CreateFunction accepts only what the cloud host uploads (local-cloud/lambda/user-packages.ts):
 * a package made by lib/functions/hosts/cloud/lambda-package.ts passes; each way of differing is refused with its reason.
 */
const layerDir = mkdtempSync(join(tmpdir(), 'runner-layer-'));
writeFileSync(join(layerDir, 'runner.mjs'), 'export {};');
const LAYER = 'arn:aws:lambda:us-east-1:123456789012:layer:Slipway-FunctionsRunnerLayer:1';
const layers = new Map([[LAYER, layerDir]]);
const request: CreateFunctionRequest = {
  FunctionName: 'Slipway-fn-abc',
  Runtime: 'nodejs22.x',
  Handler: 'index.handler',
  Layers: [LAYER],
  VpcConfig: { SubnetIds: ['subnet-1'], SecurityGroupIds: ['sg-1'] },
};
const files = (zip: Buffer) => unzipSync(zip);
const bundle = Buffer.from('export default () => new Response("hi");');

describe('local Lambda service: the package CreateFunction accepts', () => {
  it("accepts the cloud host's own package", () => {
    expect(checkUserPackage(request, files(functionPackage(bundle)), layers)).toBeNull();
  });

  it('refuses another runtime or handler, other files, a layer of no template, a missing runner, no VPC', () => {
    const good = files(functionPackage(bundle));
    expect(checkUserPackage({ ...request, Runtime: 'nodejs20.x' }, good, layers)).toBe(
      'Runtime nodejs20.x: user functions run on nodejs22.x',
    );
    expect(checkUserPackage({ ...request, Handler: 'main.handler' }, good, layers)).toBe(
      "Handler main.handler: the package's entry is index.handler",
    );
    const extra = files(
      storedZip([...Object.entries(good).map(([name, data]) => ({ name, data: Buffer.from(data) })), { name: 'x.js', data: bundle }]),
    );
    expect(checkUserPackage(request, extra, layers)).toBe(
      'the package holds function.mjs, index.mjs, x.js, not function.mjs and index.mjs',
    );
    const noRunner = files(
      storedZip([
        { name: 'index.mjs', data: Buffer.from('export const handler = 1;') },
        { name: 'function.mjs', data: bundle },
      ]),
    );
    expect(checkUserPackage(request, noRunner, layers)).toBe('index.mjs does not import the runner from /opt/runner.mjs');
    expect(checkUserPackage({ ...request, Layers: ['arn:aws:lambda:us-east-1:1:layer:other:1'] }, good, layers)).toBe(
      'Layer arn:aws:lambda:us-east-1:1:layer:other:1 is not a layer of the template',
    );
    expect(checkUserPackage(request, good, new Map([[LAYER, tmpdir()]]))).toBe('no layer provides /opt/runner.mjs');
    expect(checkUserPackage({ ...request, VpcConfig: undefined }, good, layers)).toBe(
      'a user function runs in the compute subnets behind the compute security group: VpcConfig is missing',
    );
  });
});

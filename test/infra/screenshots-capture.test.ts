import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, requireBanner } from '../../infra/bundling.ts';
import { imageContextFiles } from '../../infra/functions.ts';
import { type SlipwayStack } from '../../infra/stack.ts';
import { queueDefinitions } from '../../lib/resources.ts';
import { workers } from '../../lib/workers.ts';
import { statementsOfRole } from '../support/iam-policies.ts';
import { synthesizedSlipway } from '../support/slipway-stack.ts';

/**
 * The cloud screenshot capture worker as the stack makes it (cdk-nag runs at
 * synthesis): a container-image Lambda whose build context is staged without
 * Docker, consuming the screenshots queue, reporting through the API's URL,
 * and allowed nothing but its queue and its logs. Its code path runs in
 * test/integration/screenshots-capture-cloud.test.ts.
 */
const row = workers.find((w) => w.name === 'screenshots-capture')!;
let outdir: string;
let stack: SlipwayStack;
type Resource = { Type: string; Properties: Record<string, any> };
let resources: Record<string, Resource>;
let assets: { dockerImages: Record<string, { source: { directory: string; platform?: string } }> };

beforeAll(() => {
  let templateFile: string;
  ({ stack, outdir, templateFile } = synthesizedSlipway());
  resources = JSON.parse(fs.readFileSync(templateFile, 'utf8')).Resources;
  assets = JSON.parse(fs.readFileSync(path.join(outdir, `${stack.stackName}.assets.json`), 'utf8'));
}, 300_000);

const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);
const worker = () => stack.workers.workerFunctions.get('screenshots-capture')!;
const fnProps = () => resources[logicalId(worker().fn)]!.Properties;
/** The image asset's folder in the cloud assembly, found by the tag the function's ImageUri names. */
function imageAssetDirectory(): string {
  const uri = JSON.stringify(fnProps().Code.ImageUri);
  const hash = Object.keys(assets.dockerImages).find((id) => uri.includes(`:${id}`));
  expect(hash, uri).toBeDefined();
  return path.join(outdir, assets.dockerImages[hash!]!.source.directory);
}

describe('the screenshots capture worker', () => {
  it('is a container image for x86_64 (the Chromium @sparticuz/chromium ships), built from the Dockerfile in the repository', () => {
    const props = fnProps();
    expect(props).toMatchObject({ PackageType: 'Image', Architectures: ['x86_64'], Description: 'Slipway worker screenshots-capture' });
    expect(props.Runtime).toBeUndefined();
    expect(props.Handler).toBeUndefined();
    const uri = JSON.stringify(props.Code.ImageUri);
    expect(uri).toContain('container-assets');
    const hash = Object.keys(assets.dockerImages).find((id) => uri.includes(`:${id}`))!;
    expect(assets.dockerImages[hash]!.source.platform).toBe('linux/amd64');

    const dir = imageAssetDirectory();
    expect(fs.readdirSync(dir).sort()).toEqual([...imageContextFiles, 'index.mjs', 'index.mjs.map'].sort());
    for (const file of imageContextFiles) {
      expect(fs.readFileSync(path.join(dir, file), 'utf8'), file).toBe(
        fs.readFileSync(path.join(repoRoot, row.image!.directory, file), 'utf8'),
      );
    }
    expect(fs.readFileSync(path.join(dir, 'Dockerfile'), 'utf8')).toMatch(/^FROM public\.ecr\.aws\/lambda\/nodejs:22$/m);
  });

  it('bundles the handler, leaving out only the packages the image installs', () => {
    const code = fs.readFileSync(path.join(imageAssetDirectory(), 'index.mjs'), 'utf8');
    expect(code.startsWith(requireBanner)).toBe(true);
    const bare = [...code.matchAll(/(?:from\s*|import\(\s*)"([^"]+)"/g)].map((m) => m[1]!).filter((name) => !name.startsWith('node:'));
    expect([...new Set(bare)].sort()).toEqual([...row.image!.runtimePackages].sort());
  });

  it('installs in the image the versions the repository tests with', () => {
    const image = JSON.parse(fs.readFileSync(path.join(repoRoot, row.image!.directory, 'package.json'), 'utf8'));
    const lock = JSON.parse(fs.readFileSync(path.join(repoRoot, row.image!.directory, 'package-lock.json'), 'utf8'));
    expect(Object.keys(image.dependencies).sort()).toEqual([...row.image!.runtimePackages].sort());
    for (const name of row.image!.runtimePackages) {
      const installed = JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')).version;
      expect(image.dependencies[name], name).toBe(installed);
      expect(lock.packages[`node_modules/${name}`].version, name).toBe(installed);
    }
  });

  it("has a browser's memory, a timeout under the queue's visibility timeout, and the API's URL to report to", () => {
    const props = fnProps();
    expect(props.MemorySize).toBe(2048);
    expect(props.Timeout).toBe(90);
    expect(props.Timeout).toBeLessThan(queueDefinitions.screenshots.visibilityTimeoutSeconds);
    const apiId = logicalId(stack.api.httpApi);
    expect(props.Environment.Variables.API_BASE_URL).toEqual({
      'Fn::Join': ['', ['https://', { Ref: apiId }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }, '/']],
    });
    // No other function gets it.
    const others = Object.entries(resources).filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && id !== logicalId(worker().fn));
    expect(others.filter(([, r]) => r.Properties.Environment?.Variables?.API_BASE_URL !== undefined).map(([id]) => id)).toEqual([]);
  });

  it('consumes the screenshots queue one message at a time, reporting batch item failures; the queue has a dead-letter queue', () => {
    const mappings = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === logicalId(worker().fn),
    );
    expect(mappings.map((r) => r.Properties)).toEqual([
      {
        FunctionName: { Ref: logicalId(worker().fn) },
        EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.state.queues.screenshots), 'Arn'] },
        BatchSize: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      },
    ]);
    expect(resources[logicalId(stack.state.queues.screenshots)]!.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack.state.deadLetterQueues.screenshots), 'Arn'] },
      maxReceiveCount: queueDefinitions.screenshots.maxReceiveCount,
    });
  });

  it('may only consume its queue and write its own logs: no table, bucket or other access', () => {
    const roleId = logicalId(worker().role);
    expect(fnProps().Role).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    const statements = statementsOfRole(resources, roleId);
    const byActions = statements.map((s) => ({ actions: [s.Action].flat().sort(), resource: s.Resource }));
    expect(byActions).toEqual([
      { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resource: { 'Fn::GetAtt': [logicalId(worker().logGroup), 'Arn'] } },
      {
        actions: ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'],
        resource: { 'Fn::GetAtt': [logicalId(stack.state.queues.screenshots), 'Arn'] },
      },
    ]);
    expect(resources[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();
  });
});

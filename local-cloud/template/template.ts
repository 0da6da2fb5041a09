import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A CloudFormation resource as `cdk synth` writes it. */
export interface TemplateResource {
  Type: string;
  Properties?: Record<string, any>;
  Metadata?: Record<string, any>;
  DependsOn?: string | string[];
}

export interface SynthesizedTemplate {
  /** The cloud assembly folder (cdk.out). */
  assemblyDir: string;
  stackName: string;
  resources: Record<string, TemplateResource>;
}

/** The logical ids of every resource of one type, in template order. */
export function resourcesOfType(template: SynthesizedTemplate, type: string): [string, TemplateResource][] {
  return Object.entries(template.resources).filter(([, resource]) => resource.Type === type);
}

export interface TemplateFile {
  Parameters?: Record<string, unknown>;
  Resources?: Record<string, TemplateResource>;
  Outputs?: Record<string, { Value: unknown }>;
}

export const readTemplateFile = (assemblyDir: string, file: string) =>
  JSON.parse(readFileSync(join(assemblyDir, file), 'utf8')) as TemplateFile;

/** `value` with every intrinsic that `replace` answers (not undefined) swapped for its answer. */
function substitute(value: unknown, replace: (node: Record<string, unknown>) => unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => substitute(item, replace));
  if (!value || typeof value !== 'object') return value;
  const node = value as Record<string, unknown>;
  const replaced = replace(node);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, substitute(item, replace)]));
}

/**
 * A nested stack's template file: named by the resource's asset metadata, or
 * (when a synthesis leaves asset metadata out) by the assets manifest entry
 * whose object key its `TemplateURL` names.
 */
function nestedTemplateFile(assemblyDir: string, logicalId: string, resource: TemplateResource): string {
  const named = resource.Metadata?.['aws:asset:path'];
  if (typeof named === 'string') return named;
  const url = JSON.stringify(resource.Properties?.TemplateURL ?? '');
  for (const manifest of readdirSync(assemblyDir).filter((file) => file.endsWith('.assets.json'))) {
    const { files = {} } = JSON.parse(readFileSync(join(assemblyDir, manifest), 'utf8')) as {
      files?: Record<string, { source: { path?: string }; destinations: Record<string, { objectKey: string }> }>;
    };
    for (const asset of Object.values(files)) {
      if (asset.source.path && Object.values(asset.destinations).some((d) => url.includes(`/${d.objectKey}`))) return asset.source.path;
    }
  }
  throw new Error(`Nested stack ${logicalId}: no template file in ${assemblyDir} matches its TemplateURL`);
}

/**
 * The resources of a template with its nested stacks' resources in place of
 * each `AWS::CloudFormation::Stack`, as CloudFormation would create them: a
 * nested template's `Ref` to one of its parameters becomes the expression the
 * parent passes, and the parent's `Fn::GetAtt [stack, Outputs.X]` becomes the
 * nested output's value. Logical ids stay as written (a clash is an error).
 */
export function flattenNestedStacks(assemblyDir: string, template: TemplateFile): Record<string, TemplateResource> {
  const resources: Record<string, TemplateResource> = {};
  const outputs = new Map<string, Record<string, unknown>>();
  const nested: [string, Record<string, TemplateResource>][] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::CloudFormation::Stack') {
      resources[logicalId] = resource;
      continue;
    }
    const file = nestedTemplateFile(assemblyDir, logicalId, resource);
    const child = readTemplateFile(assemblyDir, file);
    const passed = (resource.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const withParameters = (value: unknown) =>
      substitute(value, (node) => {
        const ref = node.Ref;
        if (typeof ref !== 'string' || !(ref in (child.Parameters ?? {}))) return undefined;
        if (!(ref in passed)) throw new Error(`Nested stack ${logicalId} (${file}) is passed no value for its parameter ${ref}`);
        return passed[ref];
      });
    const childResources = withParameters(flattenNestedStacks(assemblyDir, child)) as Record<string, TemplateResource>;
    nested.push([logicalId, childResources]);
    const childOutputs = Object.entries(child.Outputs ?? {}).map(([name, output]) => [name, withParameters(output.Value)]);
    outputs.set(logicalId, Object.fromEntries(childOutputs));
  }
  const withOutputs = (value: unknown) =>
    substitute(value, (node) => {
      const getAtt = node['Fn::GetAtt'];
      if (!Array.isArray(getAtt) || !outputs.has(String(getAtt[0])) || !String(getAtt[1]).startsWith('Outputs.')) return undefined;
      const name = String(getAtt[1]).slice('Outputs.'.length);
      const found = outputs.get(String(getAtt[0]))![name];
      if (found === undefined) throw new Error(`Nested stack ${getAtt[0]} has no output ${name}`);
      return found;
    });
  const flat = withOutputs(resources) as Record<string, TemplateResource>;
  for (const [stackId, childResources] of nested) {
    for (const [logicalId, resource] of Object.entries(childResources)) {
      // Every stack carries its own CDK version record.
      if (resource.Type === 'AWS::CDK::Metadata') continue;
      if (logicalId in flat) throw new Error(`Nested stack ${stackId} and its parent both define ${logicalId}`);
      flat[logicalId] = resource;
    }
  }
  return flat;
}

/** The one stack of the cloud assembly (manifest.json names its template file), its nested stacks flattened in. */
export function readSynthesizedTemplate(assemblyDir: string): SynthesizedTemplate {
  const manifest = JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')) as {
    artifacts?: Record<string, { type: string; properties?: { templateFile?: string; stackName?: string } }>;
  };
  const stacks = Object.entries(manifest.artifacts ?? {}).filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack');
  if (stacks.length !== 1) throw new Error(`${assemblyDir} holds ${stacks.length} stacks; the synthesized mode runs exactly one`);
  const [id, artifact] = stacks[0]!;
  const templateFile = artifact.properties?.templateFile;
  if (!templateFile) throw new Error(`${assemblyDir}/manifest.json names no template for ${id}`);
  const resources = flattenNestedStacks(assemblyDir, readTemplateFile(assemblyDir, templateFile));
  return { assemblyDir, stackName: artifact.properties?.stackName ?? id, resources };
}

/** The construct path CDK records for a resource (`Slipway/Api/GetTeamProfile/Function/Resource`), without the stack. */
export function constructPath(resource: TemplateResource): string {
  const path = String(resource.Metadata?.['aws:cdk:path'] ?? '');
  return path.slice(path.indexOf('/') + 1);
}

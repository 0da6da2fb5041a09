import { readFileSync } from 'node:fs';
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

/** The one stack of the cloud assembly (manifest.json names its template file). */
export function readSynthesizedTemplate(assemblyDir: string): SynthesizedTemplate {
  const manifest = JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')) as {
    artifacts?: Record<string, { type: string; properties?: { templateFile?: string; stackName?: string } }>;
  };
  const stacks = Object.entries(manifest.artifacts ?? {}).filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack');
  if (stacks.length !== 1) throw new Error(`${assemblyDir} holds ${stacks.length} stacks; the synthesized mode runs exactly one`);
  const [id, artifact] = stacks[0]!;
  const templateFile = artifact.properties?.templateFile;
  if (!templateFile) throw new Error(`${assemblyDir}/manifest.json names no template for ${id}`);
  const template = JSON.parse(readFileSync(join(assemblyDir, templateFile), 'utf8')) as { Resources?: Record<string, TemplateResource> };
  return { assemblyDir, stackName: artifact.properties?.stackName ?? id, resources: template.Resources ?? {} };
}

/** The construct path CDK records for a resource (`Slipway/Api/GetTeamProfile/Function/Resource`), without the stack. */
export function constructPath(resource: TemplateResource): string {
  const path = String(resource.Metadata?.['aws:cdk:path'] ?? '');
  return path.slice(path.indexOf('/') + 1);
}

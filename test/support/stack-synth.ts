import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, type AppProps } from 'aws-cdk-lib';
import { inject } from 'vitest';

/**
 * Context that synthesizes the whole app without bundling its Lambdas
 * (`aws:cdk:bundling-stacks` names no stack): the template, cdk-nag's checks and
 * the image build contexts are the same, in seconds instead of minutes. The
 * bundles themselves are tested once, in the shared cloud assembly the
 * synthesized mode runs (cdk.out, local-cloud/template/assembly.ts), which `npm test`
 * synthesizes at most once and reuses while the sources are unchanged.
 */
export const withoutBundling = { 'aws:cdk:bundling-stacks': [] as string[] };

/** A folder for a cloud assembly, in the infra project's scratch folder (removed when the run ends). */
export const scratchOutdir = (prefix: string): string => fs.mkdtempSync(path.join(inject('infraScratchDir'), prefix));

/**
 * An App for a probe stack or a settings read, its cloud assembly in the run's scratch folder: a bare `new App()`
 * makes a /tmp/cdk.out* folder at construction (CDK's CloudAssemblyBuilder) and nothing removes it.
 */
export const scratchApp = (props: AppProps = {}): App => new App({ ...props, outdir: scratchOutdir('app-') });

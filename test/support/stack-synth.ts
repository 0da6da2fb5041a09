import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, type AppProps } from 'aws-cdk-lib';

/**
 * Context that synthesizes the whole app without bundling its Lambdas
 * (`aws:cdk:bundling-stacks` names no stack): the template, cdk-nag's checks and
 * the image build contexts are the same, in seconds instead of minutes. The
 * bundles themselves are tested once, in the shared cloud assembly the
 * synthesized mode runs (cdk.out, lib/local/synth/assembly.ts), which `npm test`
 * synthesizes at most once and reuses while the sources are unchanged.
 */
export const withoutBundling = { 'aws:cdk:bundling-stacks': [] as string[] };

let scratchRoot: string | undefined;

/**
 * An App for a probe stack or a settings read, its cloud assembly in a folder removed when the worker exits: a bare
 * `new App()` makes a /tmp/cdk.out* folder at construction (CDK's CloudAssemblyBuilder) and nothing removes it.
 */
export function scratchApp(props: AppProps = {}): App {
  if (!scratchRoot) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-cdk-scratch-'));
    scratchRoot = root;
    process.once('exit', () => fs.rmSync(root, { recursive: true, force: true }));
  }
  return new App({ ...props, outdir: fs.mkdtempSync(path.join(scratchRoot, 'app-')) });
}

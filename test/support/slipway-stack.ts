import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { buildSlipwayApp, type SlipwayStack } from '../../infra/stack.ts';
import { scratchOutdir, withoutBundling } from './stack-synth.ts';

/** The context of the infra files' app: every optional part the stack has (CORS, the domains, the alarm mail). */
export const slipwayTestContext = {
  ...withoutBundling,
  corsOrigins: 'https://dashboard.example.test',
  siteDomain: 'sites.example.test',
  functionDomain: 'fn.example.test',
  alarmEmail: 'oncall@example.test',
};

export interface SynthesizedSlipway {
  stack: SlipwayStack;
  assembly: CloudAssembly;
  outdir: string;
  /** The stack's own template (its nested stacks' are beside it in `outdir`). */
  templateFile: string;
}

let synthesized: SynthesizedSlipway | undefined;

/**
 * The whole app, synthesized (cdk-nag included) once per worker for the infra files that read its templates: each
 * file synthesized it again for a few seconds of a core each. The infra project shares its workers' module graph, so
 * a worker's later files get the same one; its folder goes when the run ends. Read it, never change it.
 */
export function synthesizedSlipway(): SynthesizedSlipway {
  if (!synthesized) {
    const outdir = scratchOutdir('slipway-');
    const built = buildSlipwayApp({ outdir, context: slipwayTestContext });
    // Synthesis runs the cdk-nag plugin and throws on any unacknowledged finding.
    const assembly = built.app.synth();
    synthesized = { stack: built.stack, assembly, outdir, templateFile: assembly.getStackByName(built.stack.stackName).templateFullPath };
  }
  return synthesized;
}

import type { TestProject } from 'vitest/node';
import { startMoto, type MotoServer } from '../../lib/local/moto.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
    /** The cloud assembly the synthesized mode's project runs (test/support/synth-setup.ts). */
    assemblyDir: string;
    /** Where each synthesized-mode test file leaves its Lambdas' permission usage for the run's report. */
    permissionUsageDir: string;
    /** The infra project's folder for cloud assemblies, removed when the run ends (test/support/infra-setup.ts). */
    infraScratchDir: string;
  }
}

let moto: Promise<MotoServer> | null = null;
let projects = 0;

/**
 * One real moto_server for the whole run (or the endpoint in AWS_ENDPOINT_URL),
 * shared by both projects of vitest.config.ts (each runs this setup).
 */
export async function setup(project: TestProject) {
  projects += 1;
  const endpoint = process.env.AWS_ENDPOINT_URL || (await (moto ??= startMoto())).endpoint;
  project.provide('awsEndpoint', endpoint);
}

export async function teardown() {
  projects -= 1;
  if (projects === 0) await (await moto)?.stop();
}

import type { TestProject } from 'vitest/node';
import { startMoto, type MotoServer } from '../../lib/local/moto.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    awsEndpoint: string;
    /** The cloud assembly the synthesized mode's project runs (test/support/synth-setup.ts). */
    assemblyDir: string;
    /** Where each synthesized-mode test file leaves its Lambdas' permission usage for the run's report. */
    permissionUsageDir: string;
  }
}

let moto: MotoServer | null = null;

/** One real moto_server for the whole run (or the endpoint in AWS_ENDPOINT_URL). */
export async function setup(project: TestProject) {
  const endpoint = process.env.AWS_ENDPOINT_URL || (moto = await startMoto()).endpoint;
  project.provide('awsEndpoint', endpoint);
}

export async function teardown() {
  await moto?.stop();
}

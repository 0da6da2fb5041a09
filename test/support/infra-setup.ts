import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

/**
 * Global setup of the infra project: one folder for the cloud assemblies its files synthesize
 * (test/support/stack-synth.ts, slipway-stack.ts), removed when the run ends. A worker's own exit handler is not
 * enough: vitest ends its workers without an `exit` event, and each bare `new App()` left a /tmp/cdk.out* behind.
 */
export function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-infra-'));
  project.provide('infraScratchDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}

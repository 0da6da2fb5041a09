import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { LocalPlatform } from '../../lib/local/platform.ts';
import { assemblyDir, ensureSynthesized } from '../../local-cloud/template/assembly.ts';
import type { PermissionUsage } from '../../local-cloud/iam/iam-proxy.ts';
import { permissionReport } from '../../local-cloud/report.ts';

/**
 * Global setup of the synthesized mode's project: starts synthesizing the
 * stack when cdk.out is not current (reused otherwise), and at the end writes,
 * per Lambda, the actions the suites used and the grants they never used (test/.out/permission-report.txt).
 * The synthesis is not awaited here: vitest starts no test before every global
 * setup has returned, and the source project's files need no template. Each
 * synthesized-mode file waits for it as its platform starts (test/support/platform.ts).
 */
let reportDir: string | null = null;
/** Where the run's permission report is written (test/.out is ignored by git). */
const permissionReportFile = relative(process.cwd(), join(import.meta.dirname, '..', '.out', 'permission-report.txt'));
let synthesis: Promise<unknown> | null = null;

export async function setup(project: TestProject) {
  project.provide('assemblyDir', assemblyDir());
  // A failure is reported by every file that waits for it; here it must not be an unhandled rejection.
  synthesis = ensureSynthesized((line) => process.stdout.write(`${line}\n`)).catch(() => undefined);
  reportDir = mkdtempSync(join(tmpdir(), 'slipway-permissions-'));
  project.provide('permissionUsageDir', reportDir);
}

export async function teardown() {
  await synthesis;
  if (!reportDir) return;
  const merged = new Map<string, PermissionUsage>();
  for (const file of readdirSync(reportDir)) {
    for (const line of readFileSync(join(reportDir, file), 'utf8').split('\n').filter(Boolean)) {
      const entry = JSON.parse(line) as PermissionUsage;
      const seen = merged.get(entry.functionName);
      if (!seen) merged.set(entry.functionName, entry);
      else {
        seen.actionsUsed = [...new Set([...seen.actionsUsed, ...entry.actionsUsed])].sort();
        seen.grantsUnused = seen.grantsUnused.filter((action) => entry.grantsUnused.includes(action));
        seen.denied.push(...entry.denied);
      }
    }
  }
  if (process.env.SLIPWAY_PERMISSION_REPORT !== 'off') {
    // In a file, with a line here: printed whole, its 300 lines were the tail of `npm test`'s output, below the
    // failures' summary. Refusals are printed too.
    const usage = [...merged.values()];
    mkdirSync(dirname(permissionReportFile), { recursive: true });
    writeFileSync(permissionReportFile, permissionReport(usage));
    const denied = usage.flatMap((entry) => entry.denied.map((denial) => `  DENIED ${entry.functionName}: ${denial.message}`));
    process.stdout.write(
      [`AWS permissions of the synthesized template, per Lambda: ${permissionReportFile} (${denied.length} refused)`, ...denied, ''].join(
        '\n',
      ),
    );
  }
  rmSync(reportDir, { recursive: true, force: true });
}

/** Appends a test file's permission usage when its platform stops (its worker's share of the run's report). */
export function recordPermissionUsage(platform: LocalPlatform, dir: string): void {
  const runtime = platform.synthesized;
  if (!dir || !runtime) return;
  const stop = platform.stop;
  platform.stop = async () => {
    const usage = runtime.usage();
    await stop();
    appendFileSync(join(dir, `${process.pid}.jsonl`), usage.map((entry) => JSON.stringify(entry)).join('\n') + '\n');
  };
}

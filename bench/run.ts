import { createHash } from 'node:crypto';
import * as os from 'node:os';

/**
 * `npm run bench [-- name ...]`: runs each benchmark (all by default) and
 * prints its figures against the project's targets. A benchmark never fails
 * the run on a target: speed figures are for reading, not for gating.
 * To add one, write bench/<name>.ts exporting an async function and list it here. Each is imported only when
 * it runs: a benchmark that measures this process (the queued door's platform CPU, a fork's cost) is not
 * measured with another one's modules loaded (the CDK's, the synth benchmark's).
 */
const benchmarks: Record<string, () => Promise<void>> = {
  handlers: () => import('./handlers.ts').then((m) => m.runHandlersBench()),
  synth: () => import('./synth.ts').then((m) => m.runSynthBench()),
  deploy: () => import('./deploy.ts').then((m) => m.runDeployBench()),
  functions: () => import('./functions.ts').then((m) => m.runFunctionsBench()),
  'door-link': () => import('./door-link.ts').then((m) => m.runDoorLinkBench()),
  queued: () => import('./queued.ts').then((m) => m.runQueuedBench()),
  'queued-warm': () => import('./queued-warm.ts').then((m) => m.runQueuedWarmBench()),
  dashboard: () => import('./dashboard.ts').then((m) => m.runDashboardBench()),
  serving: () => import('./serving.ts').then((m) => m.runServingBench()),
  synthesized: () => import('./synthesized.ts').then((m) => m.runSynthesizedBench()),
  builds: () => import('./builds.ts').then((m) => m.runBuildsBench()),
};

// A screenshot capture per publish would run a browser beside what is being measured.
process.env.SCREENSHOT_CAPTURE ??= 'off';

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = wanted.filter((name) => !(name in benchmarks));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Known: ${Object.keys(benchmarks).join(', ')}`);
  process.exit(2);
}
/**
 * A fixed piece of CPU work (SHA-256 of 64 MiB, median of 3), in ms: machines of the same kind differ (the same suite
 * has taken 2.5 times the CPU on one VM as on another), so figures of two runs compare only beside this one.
 */
function machineReferenceMs(): number {
  const block = Buffer.alloc(16 * 1024 * 1024, 7);
  const times = [0, 1, 2].map(() => {
    const started = performance.now();
    const hash = createHash('sha256');
    for (let i = 0; i < 4; i++) hash.update(block);
    hash.digest();
    return performance.now() - started;
  });
  return times.sort((a, b) => a - b)[1]!;
}

// Figures from a busy or slower machine are not comparable: print how busy it was and how fast.
console.log(
  `Node ${process.version} (${process.execPath}), ${process.platform}/${process.arch}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, machine reference ${machineReferenceMs().toFixed(0)} ms (SHA-256 of 64 MiB)`,
);
for (const [name, run] of Object.entries(benchmarks)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  console.log(`\n== ${name}`);
  await run();
}

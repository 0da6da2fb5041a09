import * as os from 'node:os';
import { runDashboardBench } from './dashboard.ts';
import { runBuildsBench } from './builds.ts';
import { runDeployBench } from './deploy.ts';
import { runDoorLinkBench } from './door-link.ts';
import { runFunctionsBench } from './functions.ts';
import { runHandlersBench } from './handlers.ts';
import { runQueuedBench } from './queued.ts';
import { runQueuedWarmBench } from './queued-warm.ts';
import { runServingBench } from './serving.ts';
import { runSynthBench } from './synth.ts';
import { runSynthesizedBench } from './synthesized.ts';

/**
 * `npm run bench [-- name ...]`: runs each benchmark (all by default) and
 * prints its figures against the project's targets. A benchmark never fails
 * the run on a target: speed figures are for reading, not for gating.
 * To add one, write bench/<name>.ts exporting an async function and list it here.
 */
const benchmarks: Record<string, () => Promise<void>> = {
  handlers: runHandlersBench,
  synth: runSynthBench,
  deploy: runDeployBench,
  functions: runFunctionsBench,
  'door-link': runDoorLinkBench,
  queued: runQueuedBench,
  'queued-warm': runQueuedWarmBench,
  dashboard: runDashboardBench,
  serving: runServingBench,
  synthesized: runSynthesizedBench,
  builds: runBuildsBench,
};

// A screenshot capture per publish would run a browser beside what is being measured.
process.env.SCREENSHOT_CAPTURE ??= 'off';

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = wanted.filter((name) => !(name in benchmarks));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Known: ${Object.keys(benchmarks).join(', ')}`);
  process.exit(2);
}
// Figures from a busy machine are not comparable: print how busy it was.
console.log(
  `Node ${process.version} (${process.execPath}), ${process.platform}/${process.arch}, ${os.cpus().length} CPUs, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
for (const [name, run] of Object.entries(benchmarks)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  console.log(`\n== ${name}`);
  await run();
}

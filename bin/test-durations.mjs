#!/usr/bin/env node
/**
 * Writes test/support/file-durations.json from the output of `npm test` on standard input: each test file's
 * seconds in the run, by project. The sequencer (test/support/sequencer.ts) starts a project's longest files first
 * on a fresh clone, where vitest has no timings of its own. Refresh it when files are added or change much:
 * `npm test 2>&1 | tee /tmp/run.log; node bin/test-durations.mjs < /tmp/run.log`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const text = readFileSync(0, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const durations = {};
for (const match of text.matchAll(/^(?:\[tests\])?\s+[✓×❯]\s+([a-z-]+)\s+(test\/\S+\.test\.ts)\s+\(\d+ tests?[^)]*\)\s+(\d+)ms/gm)) {
  const [, project, file, ms] = match;
  (durations[project] ??= {})[file] = Math.round(Number(ms) / 100) / 10;
}
const sorted = Object.fromEntries(
  Object.entries(durations)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([project, files]) => [project, Object.fromEntries(Object.entries(files).sort(([, a], [, b]) => b - a))]),
);
writeFileSync('test/support/file-durations.json', `${JSON.stringify(sorted, null, 2)}\n`);
const count = Object.values(sorted).reduce((sum, files) => sum + Object.keys(files).length, 0);
console.log(`test/support/file-durations.json: ${count} files`);

import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order the run's projects start in. vitest's own order is by project name (infra, source, source-fresh, synth,
 * unit), which left the synthesized project's long files for the end, three at a time on a busy moto, with nothing to
 * fill the cores beside them. Here the template's files go right after infra's (the run's one synthesis is done by
 * then), and the source files, whose workers each hold a platform and a moto of their own, fill what is left: a
 * source worker is reused only while the next file in the queue is a source file, so they stay together.
 *
 * Within a project the longest files go first, by the seconds each took in a whole run (file-durations.json, made by
 * bin/test-durations.mjs): on a fresh clone vitest has no timings of its own and starts the largest files first, so
 * a long file begun late was the run's tail while the other workers stood idle. Files the list does not know (new
 * ones) follow, in vitest's order.
 */
const projectOrder = ['infra', 'synth', 'source', 'source-fresh', 'unit'];

const durations: Record<string, Record<string, number>> = JSON.parse(
  readFileSync(new URL('./file-durations.json', import.meta.url), 'utf8'),
);

const rank = (spec: TestSpecification) => {
  const index = projectOrder.indexOf(spec.project.name);
  return index === -1 ? projectOrder.length : index;
};

const secondsOf = (spec: TestSpecification) =>
  durations[spec.project.name]?.[relative(spec.project.config.root, spec.moduleId).split('\\').join('/')] ?? -1;

export default class ProjectOrderSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: vitest's order holds among the files the list does not know.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b) || secondsOf(b) - secondsOf(a));
  }
}

import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order the run's projects start in. vitest's own order is by project name (infra, source, source-fresh, synth,
 * unit), which left the synthesized project's long files for the end, three at a time on a busy moto, with nothing to
 * fill the cores beside them. Here the template's files go right after infra's (the run's one synthesis is done by
 * then), and the source files, whose workers each hold a platform and a moto of their own, fill what is left: a
 * source worker is reused only while the next file in the queue is a source file, so they stay together.
 * Within a project the order is vitest's (longest first from its cache of the last run, else the largest file).
 */
const projectOrder = ['infra', 'synth', 'source', 'source-fresh', 'unit'];

const rank = (spec: TestSpecification) => {
  const index = projectOrder.indexOf(spec.project.name);
  return index === -1 ? projectOrder.length : index;
};

export default class ProjectOrderSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array.prototype.sort is stable: vitest's order holds inside each project.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

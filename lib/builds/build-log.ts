import { config } from '../config.ts';
import { appendLogLines } from './build-log-records.ts';

/**
 * A build's log as the worker keeps it: lines appended in order up to the
 * cap (BUILD_LOG_MAX_LINES), then one line saying the rest was cut. Returns
 * how many lines are kept after the append.
 */
export async function appendCapped(deploymentId: string, kept: number, lines: string[]): Promise<number> {
  const max = config.buildLogMaxLines();
  if (lines.length === 0 || kept >= max) return kept;
  const room = max - kept;
  const fits = lines.length <= room;
  const part = fits
    ? lines
    : [...lines.slice(0, room - 1), `[slipway] The log is cut here: a build keeps ${max} lines. The build goes on.`];
  await appendLogLines(deploymentId, kept, part);
  return kept + part.length;
}

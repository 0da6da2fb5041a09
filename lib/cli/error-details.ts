import { isJsonObject } from '../json.ts';
/**
 * An API error's `details` in words, one indented line each, under the error's sentence: the files
 * a manifest check refused and why, the fields a request got wrong, the addresses to try instead.
 * What the details carry beyond these stays in `--json`-free silence: the sentence already says it.
 */

interface Problem {
  index?: number | null;
  path?: string | null;
  problem?: string;
}

interface FieldProblem {
  field?: string;
  message?: string;
}

export function detailLines(details: unknown): string[] {
  if (!isJsonObject(details)) return [];
  const lines: string[] = [];
  if (Array.isArray(details.problems)) {
    for (const p of details.problems as Problem[]) {
      if (!isJsonObject(p) || typeof p.problem !== 'string') continue;
      const where = typeof p.path === 'string' ? p.path : typeof p.index === 'number' ? `file ${p.index + 1}` : null;
      lines.push(where ? `${where}: ${p.problem}` : p.problem);
    }
    const count = typeof details.problem_count === 'number' ? details.problem_count : lines.length;
    if (count > lines.length) lines.push(`and ${count - lines.length} more`);
  }
  if (Array.isArray(details.fields)) {
    for (const f of details.fields as FieldProblem[]) {
      if (isJsonObject(f) && typeof f.message === 'string')
        lines.push(typeof f.field === 'string' ? `${f.field}: ${f.message}` : f.message);
    }
  }
  if (Array.isArray(details.suggestions) && details.suggestions.length > 0)
    lines.push(`Try instead: ${details.suggestions.map(String).join(', ')}`);
  if (Array.isArray(details.build_log)) lines.push(...details.build_log.map(String));
  return lines;
}

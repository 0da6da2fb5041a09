import { HITS_COUNTED_PER_RULE, priorityOf, priorityRank, SCAN_RULES, type ScanPriority, type ScanRule } from './rules.ts';

/**
 * The pure part of a keyword scan: text in, matches out. No I/O, so it is
 * unit-tested on its own (test/unit/abuse-scan-rules.test.ts); the worker in
 * lib/abuse/scans.ts feeds it the deployment's files.
 */

/** Examples kept per rule (the first ones found, in file order). */
export const EXAMPLES_PER_RULE = 3;
/** Characters of context on each side of a match in a snippet. */
const SNIPPET_CONTEXT = 40;
/** Longest snippet kept (the match itself may be long). */
const SNIPPET_MAX = 200;

export interface ScanMatch {
  rule_id: string;
  category: string;
  hits: number;
  examples: { path: string; snippet: string }[];
}

export interface ScanTally {
  /** By rule id, in rule set order once finished. */
  byRule: Map<string, ScanMatch>;
}

export const newTally = (): ScanTally => ({ byRule: new Map() });

function snippetAround(text: string, index: number, length: number): string {
  const start = Math.max(0, index - SNIPPET_CONTEXT);
  const end = Math.min(text.length, index + length + SNIPPET_CONTEXT);
  const raw = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return raw.length > SNIPPET_MAX ? `${raw.slice(0, SNIPPET_MAX - 1)}…` : raw;
}

/** Runs every rule over one file's text and adds what it found to the tally. */
export function scanText(tally: ScanTally, path: string, text: string, rules: readonly ScanRule[] = SCAN_RULES): void {
  for (const rule of rules) {
    for (const pattern of rule.patterns) {
      for (const found of text.matchAll(pattern)) {
        let match = tally.byRule.get(rule.id);
        if (!match) {
          match = { rule_id: rule.id, category: rule.category, hits: 0, examples: [] };
          tally.byRule.set(rule.id, match);
        }
        match.hits += 1;
        if (match.examples.length < EXAMPLES_PER_RULE)
          match.examples.push({ path, snippet: snippetAround(text, found.index, found[0].length) });
      }
    }
  }
}

export interface ScanOutcome {
  matches: ScanMatch[];
  hits: number;
  score: number;
  priority: ScanPriority;
}

/** The scan row's figures from a tally: score is the sum of weight x min(hits, 5) per rule; priority the most urgent matched category. */
export function summarize(tally: ScanTally, rules: readonly ScanRule[] = SCAN_RULES): ScanOutcome {
  const matches: ScanMatch[] = [];
  let hits = 0;
  let score = 0;
  let priority: ScanPriority = 'none';
  for (const rule of rules) {
    const match = tally.byRule.get(rule.id);
    if (!match) continue;
    matches.push(match);
    hits += match.hits;
    score += rule.weight * Math.min(match.hits, HITS_COUNTED_PER_RULE);
    const p = priorityOf(rule.category);
    if (priorityRank(p) < priorityRank(priority)) priority = p;
  }
  return { matches, hits, score, priority };
}

const TEXT_EXTENSIONS = /\.(?:html?|xhtml|js|mjs|cjs|jsx|ts|css|json|txt|svg|xml|php|md|map)$/i;

/** Whether a deployed file is text the scan reads: by content type, else by extension. */
export function isScannedText(path: string, contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type.startsWith('text/')) return true;
  if (
    [
      'application/javascript',
      'application/json',
      'application/xml',
      'image/svg+xml',
      'application/xhtml+xml',
      'application/x-httpd-php',
    ].includes(type)
  ) {
    return true;
  }
  return TEXT_EXTENSIONS.test(path);
}

import { getObject, putObject, S3LiteError } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { SCAN_RULES } from './rules.ts';
import { EXAMPLES_PER_RULE, type ScanTally } from './scan-text.ts';
import { RULESET_VERSION } from './rules.ts';

/**
 * What a keyword scan learned of each content, carried to the project's next scan: deployed files are
 * addressed by the SHA-256 of their bytes, so a content scanned once never needs reading again while the rule
 * set and the per-file cap stay the same. One object per project in the bundles bucket,
 * `abuse-scans/{team_id}/{project_id}/blobs.json`, holding the results of the contents its latest scan saw
 * (so it never grows past one deployment's files); deleted with the project. A lost or stale object only costs
 * a full read: it is never what decides a result.
 */

/** One content's scan: how many bytes were read (`read`, raw; `bytes`, as the budget counts them) and what matched. */
export interface BlobScan {
  read: number;
  bytes: number;
  /** The per-file cap cut the reading short. */
  cut: boolean;
  matches: { rule_id: string; hits: number; snippets: string[] }[];
}

interface ScanCacheObject {
  ruleset_version: string;
  file_max_bytes: number;
  blobs: Record<string, BlobScan>;
}

export const scanCachePrefix = (teamId: string, projectId: string) => `abuse-scans/${teamId}/${projectId}/`;
const scanCacheKey = (teamId: string, projectId: string) => `${scanCachePrefix(teamId, projectId)}blobs.json`;

/** The results a project's earlier scan kept, when made by this rule set with this per-file cap; else none. */
export async function loadScanCache(teamId: string, projectId: string, fileMaxBytes: number): Promise<Map<string, BlobScan>> {
  let stored: ScanCacheObject;
  try {
    const object = await getObject(config.bucket('bundles'), scanCacheKey(teamId, projectId));
    stored = JSON.parse(await object.transformToString()) as ScanCacheObject;
  } catch (error) {
    if ((error instanceof S3LiteError && error.$metadata.httpStatusCode === 404) || error instanceof SyntaxError) return new Map();
    throw error;
  }
  if (stored.ruleset_version !== RULESET_VERSION || stored.file_max_bytes !== fileMaxBytes) return new Map();
  return new Map(Object.entries(stored.blobs ?? {}));
}

export async function saveScanCache(teamId: string, projectId: string, fileMaxBytes: number, blobs: Map<string, BlobScan>): Promise<void> {
  const body: ScanCacheObject = { ruleset_version: RULESET_VERSION, file_max_bytes: fileMaxBytes, blobs: Object.fromEntries(blobs) };
  const key = scanCacheKey(teamId, projectId);
  await putObject({ bucket: config.bucket('bundles'), key, body: JSON.stringify(body), contentType: 'application/json' });
}

/** One content's result from the tally of its own scan (the examples' paths are the deployment's, not the content's). */
export function blobScanOf(tally: ScanTally, read: number, bytes: number, cut: boolean): BlobScan {
  const matches = [...tally.byRule.values()].map((match) => ({
    rule_id: match.rule_id,
    hits: match.hits,
    snippets: match.examples.map((e) => e.snippet),
  }));
  return { read, bytes, cut, matches };
}

const categoryOf = new Map(SCAN_RULES.map((rule) => [rule.id, rule.category]));

/**
 * Adds a content's result at `path` to the deployment's tally exactly as scanning its text there would have:
 * its hits, and its snippets as examples while the rule has fewer than EXAMPLES_PER_RULE.
 */
export function addBlobScan(tally: ScanTally, path: string, blob: BlobScan): void {
  for (const found of blob.matches) {
    const category = categoryOf.get(found.rule_id);
    if (!category) continue;
    let match = tally.byRule.get(found.rule_id);
    if (!match) {
      match = { rule_id: found.rule_id, category, hits: 0, examples: [] };
      tally.byRule.set(found.rule_id, match);
    }
    match.hits += found.hits;
    for (const snippet of found.snippets) {
      if (match.examples.length >= EXAMPLES_PER_RULE) break;
      match.examples.push({ path, snippet });
    }
  }
}

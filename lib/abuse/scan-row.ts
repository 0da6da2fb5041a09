import { priorityRank, type ScanPriority } from './rules.ts';
import type { ScanMatch } from './scan-text.ts';

/**
 * The row of a keyword scan as the admin listing answers it (spec "Admin abuse scan row") and the
 * listing's order: pure, so the rules' unit tests and the records module share it.
 */

export const REVIEW_STATUSES = ['new', 'dismissed', 'actioned'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export const SCAN_STATUSES = ['queued', 'finished', 'failed'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

/** The spec's "Admin abuse scan row", every field and nothing else. */
export interface AbuseScanRow {
  branch: string;
  created_at: string;
  deployment_id: string;
  error: string | null;
  files_scanned: number;
  handled_at: string | null;
  handled_by: string | null;
  id: string;
  matches: ScanMatch[];
  priority: ScanPriority | null;
  project_id: string;
  report_count: number;
  resolution: string | null;
  review_status: ReviewStatus;
  scanned_at: string | null;
  score: number;
  site_host: string;
  status: ScanStatus;
  team_id: string;
  team_name: string | null;
  truncated: boolean;
}

const ROW_FIELDS = [
  'branch',
  'created_at',
  'deployment_id',
  'error',
  'files_scanned',
  'handled_at',
  'handled_by',
  'id',
  'matches',
  'priority',
  'project_id',
  'report_count',
  'resolution',
  'review_status',
  'scanned_at',
  'score',
  'site_host',
  'status',
  'team_id',
  'team_name',
  'truncated',
] as const satisfies readonly (keyof AbuseScanRow)[];

/** The row of a stored scan or listed item: a figure not yet written reads 0 (or none), any other field null. */
export function toScanRow(item: Partial<AbuseScanRow>): AbuseScanRow {
  const row = {} as AbuseScanRow;
  for (const field of ROW_FIELDS) Object.assign(row, { [field]: item[field] ?? null });
  row.report_count = Number(item.report_count ?? 0);
  row.files_scanned = Number(item.files_scanned ?? 0);
  row.score = Number(item.score ?? 0);
  row.truncated = item.truncated === true;
  row.matches = Array.isArray(item.matches) ? item.matches : [];
  return row;
}

const SCORE_PAD = 9_999_999_999;
const TIME_PAD = 9_999_999_999_999;

/**
 * The listing's sort key: reported projects first, then priority (critical
 * first), then score (highest first), then the newest scan, then the id.
 * Each part is fixed width so the index sorts it as a string.
 */
export function orderKey(row: Pick<AbuseScanRow, 'report_count' | 'priority' | 'score' | 'scanned_at' | 'id'>): string {
  const reported = row.report_count > 0 ? '0' : '1';
  const priority = String(priorityRank(row.priority ?? 'none'));
  const score = String(SCORE_PAD - Math.min(row.score, SCORE_PAD)).padStart(10, '0');
  const at = String(TIME_PAD - Date.parse(row.scanned_at ?? '1970-01-01T00:00:00Z')).padStart(13, '0');
  return `${reported}#${priority}#${score}#${at}#${row.id}`;
}

export const listingKeys = (row: AbuseScanRow) => ({ gsi2pk: `ABUSESCANS#${row.review_status}`, gsi2sk: orderKey(row) });

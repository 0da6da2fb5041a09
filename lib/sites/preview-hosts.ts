import { createHash } from 'node:crypto';
import { config } from '../config.ts';

/**
 * Preview hostnames: `{label}-{preview_slug}.previews.{site_domain}`.
 *
 * A preview_slug is letters and digits only, so the last hyphen of the first
 * label always separates the slug from the branch label, which may hold
 * hyphens. The slug is at most PREVIEW_SLUG_MAX characters, so a branch label
 * of at most BRANCH_LABEL_MAX always fits the 63 characters of a DNS label,
 * whatever slug the project moves to later.
 */
export const PREVIEW_SLUG_PATTERN = /^[a-z0-9]{3,20}$/;
export const PREVIEW_SLUG_MAX = 20;
export const BRANCH_LABEL_MAX = 63 - 1 - PREVIEW_SLUG_MAX;
/** Characters of the branch's hash that end a cut label. */
const HASH_CHARACTERS = 6;
/** Labels of merge requests: a branch whose label would read the same gets a hash instead (below). */
const MERGE_REQUEST_LABEL = /^mr-\d+$/;

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, HASH_CHARACTERS);

/**
 * A branch name as a DNS label: lower-cased, every run of other characters
 * than a-z and 0-9 made one hyphen, no hyphen at either end. A label longer
 * than BRANCH_LABEL_MAX is cut and ends with a short hash of the branch name,
 * so two long branches that share a beginning keep apart.
 */
export function branchLabel(branch: string): string {
  const plain =
    branch
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'branch';
  if (plain.length <= BRANCH_LABEL_MAX && !MERGE_REQUEST_LABEL.test(plain)) return plain;
  const head = plain.slice(0, BRANCH_LABEL_MAX - HASH_CHARACTERS - 1).replace(/-+$/, '');
  return `${head}-${shortHash(branch)}`;
}

/** The label of merge (pull) request `number`: its own, never a branch's. */
export function mergeRequestLabel(number: number): string {
  return `mr-${number}`;
}

export function previewHost(label: string, previewSlug: string, siteDomain = config.siteDomain()): string {
  return `${label}-${previewSlug}.previews.${siteDomain}`;
}

export function previewUrl(label: string, previewSlug: string): string {
  return `${config.publicScheme()}://${previewHost(label, previewSlug)}${config.publicPortSuffix()}`;
}

/** The label and slug a Host header names (port ignored), or null when it is no preview host. */
export function parsePreviewHost(host: string | undefined, siteDomain = config.siteDomain()): { label: string; slug: string } | null {
  if (!host) return null;
  const name = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.previews.${siteDomain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return null;
  const first = name.slice(0, -suffix.length);
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(first)) return null;
  const cut = first.lastIndexOf('-');
  if (cut <= 0) return null;
  const slug = first.slice(cut + 1);
  return PREVIEW_SLUG_PATTERN.test(slug) ? { label: first.slice(0, cut), slug } : null;
}

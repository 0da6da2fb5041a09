import type { StatFacts } from './hash-cache.ts';

/** One file of the folder being deployed. */
export interface SiteFile {
  /** Manifest path: relative, `/`-separated, no leading slash. */
  path: string;
  absolute: string;
  size: number;
  hash: string;
  /** The stat facts the file was listed with, for the hash cache (lib/cli/hash-cache.ts). */
  facts?: StatFacts;
}

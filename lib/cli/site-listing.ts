import { readdirSync, statSync, type BigIntStats } from 'node:fs';
import { resolve, sep } from 'node:path';
import { statFacts } from './hash-cache.ts';
import { CliError } from './operator-env.ts';
import type { SiteFile } from './site-file.ts';

/** Folders and files never deployed: VCS data, dependencies, macOS litter. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);
const SKIPPED_FILES = new Set(['.DS_Store']);

/**
 * Every deployable file under `dir`, sorted by path. Symlinked files are followed; symlinked folders are not (no loops).
 * Synchronous on purpose: nothing else runs while the folder is listed, and sync readdir and stat calls on 5,000 files
 * take a fifth of the time the same calls take through promises and the thread pool (about 25 ms against 160 ms on
 * the 2-core bench machine), which is most of what a repeat deploy with a warm hash cache spends on the disk.
 */
export async function listSiteFiles(dir: string): Promise<Omit<SiteFile, 'hash'>[]> {
  const root = resolve(dir);
  const rootStat = statSync(root, { throwIfNoEntry: false });
  if (!rootStat) throw new CliError(`${dir} does not exist.`);
  if (!rootStat.isDirectory()) throw new CliError(`${dir} is not a folder.`);
  const found: Omit<SiteFile, 'hash'>[] = [];
  const walk = (absolute: string, relative: string): void => {
    for (const entry of readdirSync(absolute, { withFileTypes: true })) {
      // Not path.join: its normalizing walk over every character was a fifth of the listing, and both parts are already clean.
      const abs = `${absolute}${sep}${entry.name}`;
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(abs, rel);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && !SKIPPED_FILES.has(entry.name)) {
        // stat follows a symlink: one to a file is deployed as that file, one to a folder or nowhere is skipped.
        let info: BigIntStats | undefined;
        try {
          info = statSync(abs, { bigint: true, throwIfNoEntry: false });
        } catch {
          info = undefined;
        }
        if (info?.isFile()) found.push({ path: rel, absolute: abs, size: Number(info.size), facts: statFacts(info) });
      }
    }
  };
  walk(root, '');
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

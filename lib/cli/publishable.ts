import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { missingPageLoads, missingPageLoadsSentence } from '../publishing/page-references.ts';
import { builtOutputFolder, deployInsteadSentence, sourceScriptsOf } from '../publishing/source-app.ts';
import { CliError } from './operator-env.ts';
import { type JsonObject } from '../json.ts';

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function hasBuildScript(packageJson: string | null): boolean {
  if (packageJson === null) return false;
  try {
    const scripts = (JSON.parse(packageJson) as { scripts?: JsonObject }).scripts;
    return typeof scripts?.build === 'string' && scripts.build.trim() !== '';
  } catch {
    return false;
  }
}

/**
 * Refuses, before anything is sent, a folder that is an app's source: its
 * index.html loads a source entry (`/src/main.ts`), or its package.json has a
 * build script and no build output is there (no index.html of its own, none in
 * dist/, build/ ...). Begin-upload refuses what it can tell from the paths
 * alone; this reads the two files it cannot see. The sentence names the
 * folder to deploy instead.
 */
export function refuseUnbuiltApp(dir: string, shown: string): void {
  const output = builtOutputFolder((folder) => existsSync(join(dir, folder, 'index.html')));
  const index = readText(join(dir, 'index.html'));
  const sources = index === null ? [] : sourceScriptsOf(index);
  const unbuilt = sources.length > 0 || (index === null && output === null && hasBuildScript(readText(join(dir, 'package.json'))));
  if (!unbuilt) return;
  const instead = output ? join(shown, output) : null;
  const why =
    sources.length > 0 ? ` (its index.html loads ${sources[0]})` : ' (its package.json has a build script and there is no build output)';
  throw new CliError(`${deployInsteadSentence(`${shown}${why}`, instead)} (UPLOAD_SOURCE_CODE)`);
}

/**
 * Refuses, before anything is sent, a folder whose index.html loads scripts or style sheets it does not
 * hold (an index.html copied without its assets/): published, it would be a blank page.
 */
export function refuseIncompleteSite(dir: string, paths: { path: string }[]): void {
  const index = readText(join(dir, 'index.html'));
  if (index === null) return;
  const held = new Set(paths.map((f) => f.path));
  const missing = missingPageLoads(index, (path) => held.has(path));
  if (missing.length > 0) throw new CliError(missingPageLoadsSentence(missing));
}

/** What the CLI refuses to deploy before anything is sent: an app's source, or a page without its assets. */
export function refuseUnpublishable(dir: string, paths: { path: string }[]): void {
  refuseUnbuiltApp(dir, dir);
  refuseIncompleteSite(dir, paths);
}

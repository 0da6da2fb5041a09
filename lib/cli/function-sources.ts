import { statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { enclosingApp } from './settings.ts';

/**
 * Where a folder's functions are, for `slipway deploy` and `slipway dev` alike: the folder's own
 * `{root}functions/`, else, for a build output folder (dist/ ...) with none of its own, the app's
 * `functions/` beside it (a Vite build does not copy it into dist/). The functions' packages are resolved
 * from that folder upward, as Node and esbuild resolve them: the app's node_modules/ included.
 */
export interface FunctionSources {
  /** The folder whose functions/ holds the entries, and where their imports are resolved from. */
  base: string;
  /** The functions are the app's, beside the build folder being deployed or served. */
  fromApp: boolean;
}

const isFolder = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;

export function findFunctionSources(dir: string, root = ''): FunctionSources | null {
  const own = resolve(dir, root);
  if (isFolder(join(own, 'functions'))) return { base: own, fromApp: false };
  const app = root ? null : enclosingApp(resolve(dir));
  if (app && isFolder(join(app, 'functions'))) return { base: app, fromApp: true };
  return null;
}

/** The line `deploy` and `dev` print when the functions come from the app around the folder. */
export function fromAppLine(dir: string, sources: FunctionSources): string {
  return `Functions: ${join(sources.base, 'functions')}/, the app's (${basename(resolve(dir))}/ has no functions/ of its own); their packages from its node_modules/.`;
}

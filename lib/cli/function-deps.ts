import { readdir, stat } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, posix, resolve } from 'node:path';
import type { SiteFile } from './deploy.ts';

/**
 * The npm packages a folder's functions import. `slipway deploy` skips
 * node_modules/ (a site never ships it), but the platform builds functions
 * from the deployment's own files: so the CLI bundles the function entries
 * locally (esbuild, nothing written) and adds exactly the node_modules files
 * the bundles read, plus the package.json files esbuild needs to resolve those
 * packages again on the server. A package no function imports is not sent.
 */
export interface FunctionDependencies {
  /** node_modules files to add to the manifest. */
  files: Omit<SiteFile, 'hash'>[];
  /** What the local bundling could not settle; the platform's build has the last word. */
  warnings: string[];
}

/** Entry points as the platform finds them: .js and .ts files directly in functions/ (declaration files aside). */
async function functionEntryFiles(root: string): Promise<string[]> {
  const dir = join(root, 'functions');
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => null);
  if (!entries) return [];
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && /\.(js|ts)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => `functions/${e.name}`)
    .sort();
}

const isFile = (absolute: string) => stat(absolute).then((s) => s.isFile(), () => false);

export async function functionDependencies(dir: string): Promise<FunctionDependencies> {
  const root = resolve(dir);
  const entries = await functionEntryFiles(root);
  if (entries.length === 0) return { files: [], warnings: [] };
  const esbuild = await import('esbuild');
  let inputs: string[];
  try {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: entries.map((entry) => join(root, entry)),
      outdir: join(root, '.slipway-functions-out'),
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      external: ['node:*', ...builtinModules],
      metafile: true,
      write: false,
      logLevel: 'silent',
      tsconfigRaw: '{}',
    });
    inputs = Object.keys(result.metafile.inputs);
  } catch (error) {
    const messages = (error as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors;
    if (!Array.isArray(messages)) throw error;
    // The platform's build reports the same errors, as the deploy's build log.
    return {
      files: [],
      warnings: messages.map((m) => `functions: ${m.location ? `${m.location.file}:${m.location.line}: ` : ''}${m.text}`),
    };
  }

  const warnings: string[] = [];
  const wanted = new Set<string>();
  for (const input of inputs) {
    // Inputs are relative to the folder; esbuild names virtual modules with a namespace prefix.
    if (input.includes(':')) continue;
    if (input.startsWith('../')) {
      warnings.push(`functions: ${input} is outside the deployed folder and is not sent; the platform's build will not find it.`);
      continue;
    }
    if (!input.startsWith('node_modules/')) continue;
    wanted.add(input);
    // Every package.json from the file's folder up to node_modules/: package roots (main, exports)
    // and nested ones ("type", "sideEffects") that resolving the same import on the server reads again.
    for (let folder = posix.dirname(input); folder !== 'node_modules' && folder !== '.' && folder.startsWith('node_modules/'); folder = posix.dirname(folder)) {
      if (posix.basename(folder) === 'node_modules') continue;
      const candidate = `${folder}/package.json`;
      if (!wanted.has(candidate) && (await isFile(join(root, candidate)))) wanted.add(candidate);
    }
  }
  const files = await Promise.all(
    [...wanted].sort().map(async (path) => {
      const absolute = join(root, path);
      return { path, absolute, size: (await stat(absolute)).size };
    }),
  );
  return { files, warnings };
}

/**
 * Signs that a folder is an app's source rather than its build, shared by
 * begin-upload (which sees the manifest's paths) and the CLI (which also reads
 * the folder's index.html and package.json before anything is sent). Pure: no
 * imports, so the CLI bundle stays small.
 */

/** Folders a site build writes its output into, in the order a folder to deploy instead is named. */
export const BUILD_OUTPUT_FOLDERS = ['dist', 'build', 'out', '_site', 'public'] as const;

/** Extensions a bundler compiles and a browser never runs as they are. */
const SOURCE_EXTENSION = /\.(?:ts|tsx|mts|cts|jsx|vue|svelte)$/i;

/** A file under `src/` that a bundler compiles: the entry an unbuilt app's index.html loads, or what it imports. */
export function isSourceEntryPath(path: string): boolean {
  return path.startsWith('src/') && SOURCE_EXTENSION.test(path);
}

/** The `src` of each script of an HTML page that names a source file (`/src/main.ts`), not a built one or a URL. */
export function sourceScriptsOf(html: string): string[] {
  const found: string[] = [];
  for (const match of html.matchAll(/<script\b[^>]*?\bsrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi)) {
    const src = (match[1] ?? match[2] ?? match[3] ?? '').trim();
    if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(src)) continue;
    if (SOURCE_EXTENSION.test(src.replace(/[?#].*$/, ''))) found.push(src);
  }
  return found;
}

/** The build output folder among the given top-level folders that holds an index.html, if any. */
export function builtOutputFolder(hasIndex: (folder: string) => boolean): string | null {
  return BUILD_OUTPUT_FOLDERS.find((folder) => hasIndex(folder)) ?? null;
}

/** The sentence of UPLOAD_SOURCE_CODE for an unbuilt app, naming the folder to deploy instead. */
export function deployInsteadSentence(what: string, output: string | null): string {
  return output
    ? `${what} is an app's source, not its build: deploy its build output ${output}/ instead.`
    : `${what} is an app's source, not its build: run its build (npm run build), then deploy the output folder (dist/ for Vite) instead.`;
}

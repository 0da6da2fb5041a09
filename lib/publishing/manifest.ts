import { ApiError } from '../errors/api-error.ts';
import { INVALID_MANIFEST, UPLOAD_PHP_SITE, UPLOAD_SITE_IN_SUBFOLDER, UPLOAD_SOURCE_CODE } from '../errors/catalogue/sites.ts';
import { MAX_FILE_BYTES, type Plan } from '../plans.ts';
import { builtOutputFolder, deployInsteadSentence, isSourceEntryPath } from './source-app.ts';
import { type JsonObject } from '../json.ts';

/** One manifest entry: a file of the deployment, by path, with its content's SHA-256 and size. */
export interface ManifestFile {
  path: string;
  hash: string;
  size: number;
}

/** A checked manifest and the figures begin-upload needs. */
export interface CheckedManifest {
  files: ManifestFile[];
  /** Each unique hash once, with its size. */
  blobs: Map<string, number>;
  totalBytes: number;
}

const HASH_PATTERN = /^[0-9a-f]{64}$/;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
/** S3 keys are at most 1024 bytes and carry `{team_id}/{slug}/{deployment_id}/` in front. */
const MAX_PATH_BYTES = 900;
/** A manifest with thousands of defects gets the first ones, not a megabyte of details. */
const MAX_PROBLEMS_REPORTED = 50;
const MIB = 1024 * 1024;

interface Problem {
  index: number | null;
  path: string | null;
  problem: string;
}

const DOT_DOT_SEGMENT = /(?:^|\/)\.\.(?:\/|$)/;
const EMPTY_SEGMENT = /\/\/|\/$/;
const DOT_SEGMENT = /(?:^|\/)\.(?:\/|$)/;

/** The first defect of a path, in this order; checked without splitting, since a manifest has thousands of paths. */
function pathProblem(path: string): string | null {
  if (path.length === 0) return 'path is empty';
  if (path.startsWith('/')) return 'path is absolute';
  if (path.includes('\\')) return 'path contains a backslash';
  if (CONTROL_CHARACTER.test(path)) return 'path contains a control character';
  if (DOT_DOT_SEGMENT.test(path)) return 'path contains a ".." segment';
  if (EMPTY_SEGMENT.test(path)) return 'path has an empty segment';
  if (DOT_SEGMENT.test(path)) return 'path contains a "." segment';
  // A UTF-16 unit is at most 3 UTF-8 bytes: only a long path needs counting.
  if (path.length * 3 > MAX_PATH_BYTES && Buffer.byteLength(path) > MAX_PATH_BYTES) return `path is longer than ${MAX_PATH_BYTES} bytes`;
  return null;
}

/**
 * Checks the `files` of a begin-upload body, before anything is created:
 * every defect is listed in `details.problems` (index, path, problem).
 */
export function checkManifest(files: unknown, plan: Plan): CheckedManifest {
  const problems: Problem[] = [];
  const fail = (extra: JsonObject = {}): never => {
    throw new ApiError(INVALID_MANIFEST, {
      details: { problems: problems.slice(0, MAX_PROBLEMS_REPORTED), problem_count: problems.length, ...extra },
    });
  };
  if (!Array.isArray(files)) {
    problems.push({ index: null, path: null, problem: files === undefined ? 'files is required' : 'files must be an array' });
    fail();
  }
  const list = files as unknown[];
  if (list.length === 0) {
    problems.push({ index: null, path: null, problem: 'files is empty' });
    fail();
  }
  if (list.length > plan.maxFiles) {
    problems.push({ index: null, path: null, problem: `more than ${plan.maxFiles} files, the limit of the ${plan.name} plan` });
    fail({ max_files: plan.maxFiles, file_count: list.length, plan: plan.name });
  }

  const out: ManifestFile[] = [];
  const seenPaths = new Map<string, number>();
  const blobs = new Map<string, number>();
  let totalBytes = 0;
  for (let index = 0; index < list.length; index++) {
    const entry = list[index];
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push({ index, path: null, problem: 'entry must be an object {hash, path, size}' });
      continue;
    }
    const { path, hash, size } = entry as JsonObject;
    const before = problems.length;
    const report = (problem: string) => void problems.push({ index, path: typeof path === 'string' ? path : null, problem });
    if (typeof path !== 'string') report('path must be a string');
    else {
      const p = pathProblem(path);
      if (p) report(p);
      else if (seenPaths.has(path)) report(`duplicate path (also at index ${seenPaths.get(path)})`);
      else seenPaths.set(path, index);
    }
    if (typeof hash !== 'string' || !HASH_PATTERN.test(hash)) report('hash must be the lowercase hex SHA-256 of the file (64 characters)');
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) report('size must be a non-negative integer');
    else if (size > MAX_FILE_BYTES) report(`size is over ${MAX_FILE_BYTES / MIB} MiB (${MAX_FILE_BYTES} bytes), the largest file accepted`);
    if (problems.length > before) continue;
    const h = hash as string;
    const known = blobs.get(h);
    if (known !== undefined && known !== size) {
      report(`size ${size as number} differs from the size ${known} given for the same hash`);
      continue;
    }
    blobs.set(h, size as number);
    totalBytes += size as number;
    out.push({ path: path as string, hash: h, size: size as number });
  }
  if (problems.length > 0) fail();
  return { files: out, blobs, totalBytes };
}

/** Files at the root that only a source tree (not a built site) has. */
const SOURCE_MARKERS = ['package.json', 'composer.json', 'Cargo.toml', 'go.mod', 'Gemfile', 'requirements.txt', 'pyproject.toml'];
/** Build-tool configuration: their presence at the root means the output folder was not what was uploaded. */
const BUILD_CONFIG = /^(vite|next|nuxt|astro|svelte|gatsby-config|webpack|remix|angular)(\.config)?\.(js|cjs|mjs|ts|json)$/;
const SOURCE_DIRECTORIES = ['src', 'node_modules', 'app', 'pages'];

/**
 * Whether the files form a publishable static site. Refuses PHP sites, a site
 * whose index.html sits inside a single top folder (dist/, build/ ...) and a
 * source tree, each with the evidence in `details`.
 */
export function checkPublishable(files: ManifestFile[]): void {
  const paths = files.map((f) => f.path);
  const rootFiles = new Set(paths.filter((p) => !p.includes('/')));
  const topFolders = new Set(paths.filter((p) => p.includes('/')).map((p) => p.split('/')[0]!));
  const hasRootIndex = rootFiles.has('index.html') || rootFiles.has('index.htm');

  const phpFiles = paths.filter((p) => /\.(php\d?|phtml)$/i.test(p));
  const phpEntry = paths.filter((p) => /^(?:[^/]+\/)?index\.php$/i.test(p));
  if (phpEntry.length > 0 || (phpFiles.length > 0 && !hasRootIndex)) {
    throw new ApiError(UPLOAD_PHP_SITE, { details: { php_files: (phpEntry.length > 0 ? phpEntry : phpFiles).slice(0, 10) } });
  }

  if (!hasRootIndex) {
    const all = new Set(paths);
    const folders = [...topFolders].filter((folder) => all.has(`${folder}/index.html`));
    if (folders.length === 1) {
      throw new ApiError(UPLOAD_SITE_IN_SUBFOLDER, { details: { folder: folders[0], index_path: `${folders[0]}/index.html` } });
    }
  }

  // A bundler app's own folder (Vite's has no config file of its own): index.html loads /src/main.ts.
  const entries = hasRootIndex && rootFiles.has('package.json') ? paths.filter(isSourceEntryPath) : [];
  if (entries.length > 0) {
    const all = new Set(paths);
    const output = builtOutputFolder((folder) => all.has(`${folder}/index.html`));
    throw new ApiError(UPLOAD_SOURCE_CODE, {
      message: deployInsteadSentence('This upload', output),
      details: { markers: ['package.json', ...entries.slice(0, 5)], deploy_instead: output },
    });
  }

  const markers = [...SOURCE_MARKERS.filter((m) => rootFiles.has(m)), ...[...rootFiles].filter((f) => BUILD_CONFIG.test(f))];
  const sourceDirs = SOURCE_DIRECTORIES.filter((d) => topFolders.has(d)).map((d) => `${d}/`);
  const buildConfig = markers.some((m) => BUILD_CONFIG.test(m));
  if ((markers.length > 0 && sourceDirs.length > 0 && (!hasRootIndex || buildConfig)) || (!hasRootIndex && buildConfig)) {
    throw new ApiError(UPLOAD_SOURCE_CODE, { details: { markers: [...markers, ...sourceDirs] } });
  }
}

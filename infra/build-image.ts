import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The build script and its Dockerfile (lib/builds/script/). */
export const buildScriptDirectory = path.join(repoRoot, 'lib/builds/script');

/** What the image holds beside the build script: the build's egress proxy, the local build's own code bundled. */
const EGRESS_ENTRY = path.join(repoRoot, 'lib/builds/build-egress.ts');

/**
 * The context of the builds' CodeBuild image, staged in a fresh folder (the caller removes it): the Dockerfile, the
 * build script (build.mjs, cloud.mjs) and egress.mjs, lib/builds/build-egress.ts bundled with what it imports, so
 * that a build in the cloud goes out through the same egress proxy as a local one. The tests of the cloud path run
 * the script from such a folder, as the image holds it.
 */
export function stageBuildImage(): string {
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-build-image-'));
  for (const file of ['Dockerfile', 'build.mjs', 'cloud.mjs'])
    fs.copyFileSync(path.join(buildScriptDirectory, file), path.join(context, file));
  buildSync({
    entryPoints: [EGRESS_ENTRY],
    outfile: path.join(context, 'egress.mjs'),
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    logLevel: 'warning',
  });
  return context;
}

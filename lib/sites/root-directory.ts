/**
 * A project's `root_directory` as a manifest path prefix: '' or `dir/`. The functions build looks for
 * `{root}functions/` and `{root}node_modules/` (lib/functions/build.ts), and `slipway deploy` collects what
 * those functions import from the same place (lib/cli/function-deps.ts).
 */
export function rootPrefix(rootDirectory: unknown): string {
  if (typeof rootDirectory !== 'string') return '';
  const trimmed = rootDirectory
    .trim()
    .replace(/\\/g, '/')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
  return trimmed ? `${trimmed}/` : '';
}

/**
 * A repository's address as one key, whatever form names it: `https://Host/org/repo.git`,
 * `git@host:org/repo.git`, `ssh://git@host:22/org/repo` and `http://127.0.0.1:8080/org/repo/`
 * all reduce to `host[:port]/org/repo`. The host is lower-cased (DNS is case-blind); the
 * path keeps its case, as forges report it in their payloads. Null for what names no repository.
 */
export function repoKey(address: string | null | undefined): string | null {
  if (typeof address !== 'string') return null;
  const text = address.trim();
  if (text === '') return null;
  let host: string;
  let path: string;
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/.exec(text);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    host = scp[1]!.toLowerCase();
    path = scp[2]!;
  } else {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return null;
    }
    if (!['http:', 'https:', 'ssh:', 'git:'].includes(url.protocol) || !url.hostname) return null;
    const defaultPort = { 'http:': '80', 'https:': '443', 'ssh:': '22', 'git:': '9418' }[url.protocol];
    host = url.hostname.toLowerCase() + (url.port && url.port !== defaultPort && url.protocol !== 'ssh:' ? `:${url.port}` : '');
    path = decodeURIComponent(url.pathname);
  }
  const clean = path
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  if (clean === '' || clean.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return null;
  return `${host}/${clean}`;
}

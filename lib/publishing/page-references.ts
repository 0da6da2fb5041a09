/**
 * The files a site's index.html loads (its scripts, style sheets and module
 * preloads) that the upload does not hold: a folder flattened by a file picker,
 * or an index.html deployed without its assets/ folder, publishes a blank page.
 * Shared by the console and the CLI, which refuse such an upload before
 * anything is sent. Pure: no imports, so the console and the CLI bundle take it
 * as it is.
 */

const ATTRIBUTE = (name: string) => new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i');

function attribute(tag: string, name: string): string | null {
  const match = ATTRIBUTE(name).exec(tag);
  return match ? (match[1] ?? match[2] ?? match[3] ?? '').trim() : null;
}

/** Link relations whose target the page cannot do without (a blank or unstyled page when it is missing). */
const LOADED_RELS = new Set(['stylesheet', 'modulepreload']);

/** The local paths (relative to the site's root, no leading slash) of what the page loads, in page order. */
export function pageLoads(html: string): string[] {
  // Comments and inline scripts hold text that looks like tags.
  const markup = html.replace(/<!--[\s\S]*?-->/g, '').replace(/(<script\b[^>]*>)[\s\S]*?<\/script>/gi, '$1</script>');
  const baseHref = attribute(/<base\b[^>]*>/i.exec(markup)?.[0] ?? '', 'href');
  const base = new URL(baseHref ?? '/', 'http://site.invalid/');
  const found: string[] = [];
  for (const [tag] of markup.matchAll(/<(?:script|link)\b[^>]*>/gi)) {
    const isScript = /^<script/i.test(tag);
    if (!isScript) {
      const rels = (attribute(tag, 'rel') ?? '').toLowerCase().split(/\s+/);
      if (!rels.some((rel) => LOADED_RELS.has(rel))) continue;
    }
    const target = attribute(tag, isScript ? 'src' : 'href');
    if (!target || target.startsWith('#') || /^[a-z][a-z0-9+.-]*:|^\/\//i.test(target)) continue;
    let url: URL;
    try {
      url = new URL(target, base);
    } catch {
      continue;
    }
    if (url.origin !== base.origin) continue;
    let path: string;
    try {
      path = decodeURIComponent(url.pathname).slice(1);
    } catch {
      path = url.pathname.slice(1);
    }
    if (path && !found.includes(path)) found.push(path);
  }
  return found;
}

/** What the page loads that `has` says the upload does not hold. */
export function missingPageLoads(html: string, has: (path: string) => boolean): string[] {
  return pageLoads(html).filter((path) => !has(path) && !(path.endsWith('/') && has(`${path}index.html`)));
}

/** The sentence a refused upload shows: which files, and what to pick instead. */
export function missingPageLoadsSentence(missing: string[]): string {
  const shown = missing.slice(0, 3).join(', ') + (missing.length > 3 ? ` and ${missing.length - 3} more` : '');
  return (
    `index.html loads files this upload does not have (${shown}), so the page would be blank. ` +
    'Deploy the whole folder index.html was built in, with its subfolders (dist/ for Vite).'
  );
}

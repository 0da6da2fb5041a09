import { describe, expect, it } from 'vitest';
import { missingPageLoads, missingPageLoadsSentence, pageLoads } from '../../lib/publishing/page-references.ts';

const vite = `<!doctype html>
<html lang="en">
  <head>
    <link rel="icon" type="image/svg+xml" href="/vite.svg" />
    <script type="module" crossorigin src="/assets/index-BkD1.js"></script>
    <link rel="modulepreload" crossorigin href="./assets/vendor-9a.js">
    <link rel="stylesheet" crossorigin href="assets/index-Cx.css">
    <link rel="stylesheet" href="https://fonts.example.com/a.css">
    <script src="//cdn.example.com/x.js"></script>
    <!-- <script src="/assets/commented.js"></script> -->
    <script>document.write('<script src="/assets/inline.js"></' + 'script>')</script>
    <script src="/assets/with%20space.js?v=3#top"></script>
  </head>
  <body><div id="root"></div><a href="/about">About</a><img src="/logo.png"></body>
</html>`;

describe('the files an index.html loads', () => {
  it('lists local scripts, style sheets and module preloads as root-relative paths, nothing else', () => {
    expect(pageLoads(vite)).toEqual(['assets/index-BkD1.js', 'assets/vendor-9a.js', 'assets/index-Cx.css', 'assets/with space.js']);
  });

  it('resolves relative paths against <base href>', () => {
    expect(pageLoads('<base href="/app/"><script src="main.js"></script><script src="/root.js"></script>')).toEqual([
      'app/main.js',
      'root.js',
    ]);
  });

  it('names what a flattened folder lacks, and nothing when the folder is whole', () => {
    const flattened = new Set(['index.html', 'index-BkD1.js', 'vendor-9a.js', 'index-Cx.css', 'with space.js']);
    expect(missingPageLoads(vite, (p) => flattened.has(p))).toEqual([
      'assets/index-BkD1.js',
      'assets/vendor-9a.js',
      'assets/index-Cx.css',
      'assets/with space.js',
    ]);
    const whole = new Set(['index.html', ...pageLoads(vite)]);
    expect(missingPageLoads(vite, (p) => whole.has(p))).toEqual([]);
  });

  it('says which files and what to deploy instead', () => {
    expect(missingPageLoadsSentence(['assets/a.js', 'assets/b.css', 'assets/c.js', 'assets/d.js', 'assets/e.js'])).toBe(
      'index.html loads files this upload does not have (assets/a.js, assets/b.css, assets/c.js and 2 more), so the page would be blank. ' +
        'Deploy the whole folder index.html was built in, with its subfolders (dist/ for Vite).',
    );
  });
});

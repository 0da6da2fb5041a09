import mime from 'mime';
import { describe, expect, it } from 'vitest';
import { contentTypeFor } from '../../lib/deployments/content-type.ts';

describe('contentTypeFor', () => {
  it.each([
    ['index.html', 'text/html; charset=utf-8'],
    ['assets/app.JS', 'text/javascript; charset=utf-8'],
    ['data/feed.json', 'application/json; charset=utf-8'],
    ['img/logo.svg', 'image/svg+xml; charset=utf-8'],
    ['img/photo.png', 'image/png'],
    ['fonts/a.woff2', 'font/woff2'],
    ['file.unknownext', 'application/octet-stream'],
    ['LICENSE', 'application/octet-stream'],
    // Sources, never video (mime says video/mp2t for .ts).
    ['src/main.ts', 'text/plain; charset=utf-8'],
    ['src/App.tsx', 'text/plain; charset=utf-8'],
    ['src/App.jsx', 'text/plain; charset=utf-8'],
    ['lib/x.MTS', 'text/plain; charset=utf-8'],
  ])('%s is served as %s', (path, type) => expect(contentTypeFor(path)).toBe(type));

  // Remembered per extension: the answer must be mime's for every path shape, asked in any order.
  it.each([
    'a/b.css',
    'b.css',
    'x.CSS',
    'css',
    'a/css',
    '.css',
    'a/.css',
    'a/b.',
    'b.',
    'dir.with.dots/file',
    'a\\b.css',
    'a.b\\c',
    'v1.2/readme',
    'x.tar.gz',
    '.htaccess',
  ])('%s: as mime says', (path) => {
    const type = mime.getType(path) ?? 'application/octet-stream';
    expect(contentTypeFor(path).split(';')[0]).toBe(type);
    expect(contentTypeFor(path).split(';')[0]).toBe(type);
  });
});

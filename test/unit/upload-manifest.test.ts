import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../lib/errors/api-error.ts';
import { plans } from '../../lib/plans.ts';
import { atExpression } from '../../lib/aws/schedules.ts';
import { subdomainFrom, subdomainProblem, withSuffix } from '../../lib/projects/subdomain.ts';
import { checkManifest, checkPublishable } from '../../lib/publishing/manifest.ts';
import { sourceScriptsOf } from '../../lib/publishing/source-app.ts';

const free = { ...plans.free, name: 'free' as const };
const h = (n: number) => n.toString(16).padStart(64, '0');
const files = (...paths: string[]) => paths.map((path, i) => ({ path, hash: h(i + 1), size: 1 }));

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    return (error as ApiError).code;
  }
}

describe('checkManifest', () => {
  const problemOf = (path: string) => {
    try {
      checkManifest([{ path, hash: h(1), size: 1 }], free);
      return null;
    } catch (error) {
      return ((error as ApiError).details as { problems: { problem: string }[] }).problems[0]!.problem;
    }
  };

  it.each([
    ['', 'path is empty'],
    ['/a.html', 'path is absolute'],
    ['a\\b.html', 'path contains a backslash'],
    ['a\u0007.html', 'path contains a control character'],
    ['..', 'path contains a ".." segment'],
    ['a/../b', 'path contains a ".." segment'],
    ['a/..', 'path contains a ".." segment'],
    ['./a//b', 'path has an empty segment'],
    ['a//b', 'path has an empty segment'],
    ['a/', 'path has an empty segment'],
    ['..//a', 'path contains a ".." segment'],
    ['.', 'path contains a "." segment'],
    ['a/./b', 'path contains a "." segment'],
    ['a/.', 'path contains a "." segment'],
    [`${'é'.repeat(451)}`, 'path is longer than 900 bytes'],
  ])('refuses %j: %s', (path, problem) => expect(problemOf(path)).toBe(problem));

  it.each(['...', 'a/...b', '.well-known/x', 'a/.b/c', 'a..b/c', `${'é'.repeat(450)}`, `${'a'.repeat(900)}`])('accepts %j', (path) => {
    expect(problemOf(path)).toBeNull();
  });

  it('counts each hash once and sums every file', () => {
    const checked = checkManifest(
      [
        { path: 'index.html', hash: h(1), size: 5 },
        { path: 'copy.html', hash: h(1), size: 5 },
        { path: 'a.css', hash: h(2), size: 3 },
      ],
      free,
    );
    expect([...checked.blobs.entries()]).toEqual([
      [h(1), 5],
      [h(2), 3],
    ]);
    expect(checked.totalBytes).toBe(13);
  });

  it('lists every defect with its index and path', () => {
    try {
      checkManifest(
        [
          { path: '/abs', hash: 'x', size: -1 },
          { path: 'ok.html', hash: h(1), size: 1 },
          { path: 'a/./b', hash: h(1), size: 2 },
        ],
        free,
      );
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).code).toBe('INVALID_MANIFEST');
      const problems = ((error as ApiError).details as { problems: { index: number; path: string }[] }).problems;
      expect(problems.map((p) => [p.index, p.path])).toEqual([
        [0, '/abs'],
        [0, '/abs'],
        [0, '/abs'],
        [2, 'a/./b'],
      ]);
    }
  });

  it('refuses one hash given two sizes', () => {
    expect(
      codeOf(() =>
        checkManifest(
          [
            { path: 'a.html', hash: h(1), size: 1 },
            { path: 'b.html', hash: h(1), size: 2 },
          ],
          free,
        ),
      ),
    ).toBe('INVALID_MANIFEST');
  });
});

describe('checkPublishable', () => {
  it.each([
    [['index.html', 'app.js'], null],
    [['404.html', 'img/a.png'], null],
    [['dist/index.html', 'dist/a.js'], 'UPLOAD_SITE_IN_SUBFOLDER'],
    [['dist/index.html', 'README.md'], 'UPLOAD_SITE_IN_SUBFOLDER'],
    [['a/index.html', 'b/index.html'], null],
    [['package.json', 'src/index.ts'], 'UPLOAD_SOURCE_CODE'],
    [['package.json', 'src/index.ts', 'dist/index.html'], 'UPLOAD_SITE_IN_SUBFOLDER'],
    [['index.html', 'vite.config.ts', 'src/main.ts', 'package.json'], 'UPLOAD_SOURCE_CODE'],
    [['index.html', 'package.json'], null],
    // Vite's own template: no config file, index.html loads /src/main.ts.
    [['index.html', 'package.json', 'src/main.ts', 'src/style.css', 'public/vite.svg'], 'UPLOAD_SOURCE_CODE'],
    [['index.html', 'package.json', 'src/main.tsx', 'dist/index.html'], 'UPLOAD_SOURCE_CODE'],
    [['index.html', 'package.json', 'src/app.js'], null],
    [['index.php'], 'UPLOAD_PHP_SITE'],
    [['wp/index.php', 'wp/x.css'], 'UPLOAD_PHP_SITE'],
    [['index.html', 'contact.php'], null],
    [['about.php', 'x.css'], 'UPLOAD_PHP_SITE'],
  ] as const)('%j -> %s', (paths, code) => {
    expect(codeOf(() => checkPublishable(files(...paths)))).toBe(code);
  });
});

describe('an unbuilt app', () => {
  it('names the build output to deploy instead when the upload holds one', () => {
    try {
      checkPublishable(files('index.html', 'package.json', 'src/main.tsx', 'dist/index.html', 'dist/assets/a.js'));
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).code).toBe('UPLOAD_SOURCE_CODE');
      expect((error as ApiError).message).toBe("This upload is an app's source, not its build: deploy its build output dist/ instead.");
      expect((error as ApiError).details).toEqual({ markers: ['package.json', 'src/main.tsx'], deploy_instead: 'dist' });
    }
  });

  it('finds the source scripts an index.html loads, not built ones nor URLs', () => {
    const html = `<script type="module" src="/src/main.ts"></script><script src='./src/App.tsx?v=1'></script>
      <script src=/assets/index-abc.js></script><script src="https://cdn.example/x.ts"></script>`;
    expect(sourceScriptsOf(html)).toEqual(['/src/main.ts', './src/App.tsx?v=1']);
  });
});

describe('subdomains', () => {
  it('validates DNS labels and the reserved list', () => {
    expect(subdomainProblem('my-site')).toBeNull();
    expect(subdomainProblem('ab')).toBe('invalid');
    expect(subdomainProblem('xn--abc')).toBe('invalid');
    expect(subdomainProblem('www')).toBe('reserved');
  });

  it('derives labels from names and suffixes them within 63 characters', () => {
    expect(subdomainFrom('Café Rocket!')).toBe('cafe-rocket');
    expect(subdomainFrom('!!')).toBe('site');
    expect(withSuffix('x'.repeat(63), 'abcd')).toHaveLength(63);
  });
});

describe('atExpression', () => {
  it('is the one-time at() expression, rounded up to the second', () => {
    expect(atExpression(new Date('2026-11-22T10:00:00.250Z'))).toBe('at(2026-11-22T10:00:01)');
    expect(atExpression(new Date('2026-11-22T10:00:00.000Z'))).toBe('at(2026-11-22T10:00:00)');
  });
});

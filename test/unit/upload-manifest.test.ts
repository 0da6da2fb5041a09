import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../lib/errors/api-error.ts';
import { plans } from '../../lib/plans.ts';
import { atExpression } from '../../lib/aws/schedules.ts';
import { subdomainFrom, subdomainProblem, withSuffix } from '../../lib/projects/subdomain.ts';
import { checkManifest, checkPublishable } from '../../lib/publishing/manifest.ts';
import { sourceScriptsOf } from '../../lib/publishing/source-app.ts';
import { sendUploadRequests, uploadRequests } from '../../lib/upload-requests.ts';

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

describe("the upload client's requests (the CLI's and the console's, lib/upload-requests.ts)", () => {
  const MiB = 1024 * 1024;
  const file = (n: number, size: number) => ({ hash: h(n), size });

  it('batches small files up to 100 or 4 MiB, gives a file over 1 MiB a PUT and one over 4 MiB an upload URL', () => {
    const small = Array.from({ length: 101 }, (_, i) => file(i + 1, 1));
    const requests = uploadRequests('u-1', [...small, file(200, MiB + 1), file(201, 4 * MiB + 1), file(202, MiB)]);
    expect(requests.map((r) => [r.kind, r.files.length])).toEqual([
      ['batch', 100],
      ['put', 1],
      ['storage', 1],
      ['batch', 2],
    ]);
    expect(requests[0]).toMatchObject({ url: '/uploads/u-1/files' });
    expect(requests[1]).toMatchObject({ url: `/uploads/u-1/files/${h(200)}` });
    expect(requests[2]).toMatchObject({
      uploadUrl: `/uploads/u-1/files/${h(201)}/upload-url`,
      completeUrl: `/uploads/u-1/files/${h(201)}/complete`,
    });
    // 1 MiB files: four fill a batch's 4 MiB exactly, the fifth starts the next.
    const bytes = uploadRequests(
      'u-1',
      [1, 2, 3, 4, 5].map((n) => file(n, MiB)),
    );
    expect(bytes.map((r) => r.files.map((f) => f.hash))).toEqual([[h(1), h(2), h(3), h(4)], [h(5)]]);
  });

  it('sends at most `concurrency` at once and starts none after a failure', async () => {
    const requests = uploadRequests(
      'u-1',
      Array.from({ length: 10 }, (_, i) => file(i + 1, MiB + 1)),
    );
    let inFlight = 0;
    let most = 0;
    const started: string[] = [];
    const sent: string[] = [];
    const sending = sendUploadRequests(
      requests,
      3,
      async (request) => {
        started.push(request.files[0].hash);
        inFlight++;
        most = Math.max(most, inFlight);
        await Promise.resolve();
        inFlight--;
        if (request.files[0].hash === h(4)) throw new Error('refused');
      },
      (request) => sent.push(request.files[0].hash),
    );
    await expect(sending).rejects.toThrow('refused');
    expect(most).toBe(3);
    expect(sent).not.toContain(h(4));
    expect(started.length).toBeLessThan(10);
  });
});

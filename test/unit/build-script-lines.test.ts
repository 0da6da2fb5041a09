import { describe, expect, it } from 'vitest';
import { installFailureLine, spokenDuration } from '../../lib/builds/script/build.mjs';

/** The build script's own lines (lib/builds/script/build.mjs): a silent step's duration, a failed install's classified line. */
describe('spokenDuration', () => {
  it('says seconds under a minute, then minutes and seconds', () => {
    expect([0, 999, 1000, 30_000, 59_400, 60_000, 65_000, 3_600_000].map(spokenDuration)).toEqual([
      '0 s',
      '1 s',
      '1 s',
      '30 s',
      '59 s',
      '1 min',
      '1 min 5 s',
      '60 min',
    ]);
  });
});

describe('installFailureLine', () => {
  const npm = { command: 'npm', args: ['ci', '--no-audit', '--no-fund'], lockfile: 'package-lock.json', code: 1 };

  it('names the connection the egress refused, and one it could not make', () => {
    const tail = ['npm error code E403', 'npm error 403 403 Forbidden - GET https://127.0.0.1/left-pad/-/left-pad-1.3.0.tgz'];
    expect(
      installFailureLine({
        ...npm,
        tail,
        trouble: [{ target: '127.0.0.1:443', why: 'The host resolves to a loopback address, which is blocked.' }],
      }),
    ).toBe(
      "Install failed: the package registry could not be reached: the build's egress rule refused 127.0.0.1:443: The host resolves to a loopback address, which is blocked.",
    );
    expect(installFailureLine({ ...npm, tail: ['npm error code E502'], trouble: [{ target: 'registry.npmjs.org:443', why: null }] })).toBe(
      'Install failed: the package registry could not be reached: the connection to registry.npmjs.org:443 failed.',
    );
  });

  it('reads a network error in the output where no proxy reports (CodeBuild)', () => {
    const tail = [
      'npm warn retry will retry',
      'npm error code ETIMEDOUT',
      'npm error network request to https://registry.npmjs.org/x failed',
    ];
    expect(installFailureLine({ ...npm, tail, trouble: [] })).toBe(
      'Install failed: the package registry could not be reached: npm error code ETIMEDOUT',
    );
  });

  it('keeps the lockfile, missing-command and exit-code lines', () => {
    expect(installFailureLine({ ...npm, code: 127, tail: [], trouble: [] })).toBe(
      'Install failed: npm is not available in the build image.',
    );
    expect(
      installFailureLine({
        ...npm,
        tail: ['npm error `npm ci` can only install packages when your package.json and package-lock.json are in sync.'],
        trouble: [],
      }),
    ).toBe('Install failed: package-lock.json is out of step with package.json; update the lockfile and push again.');
    expect(installFailureLine({ ...npm, code: 2, tail: ['npm error Cannot read properties of undefined'], trouble: [] })).toBe(
      'Install failed: npm ci exited with code 2: npm error Cannot read properties of undefined',
    );
  });
});

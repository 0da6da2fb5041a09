import { describe, expect, it } from 'vitest';
import { formatBytes, functionEntries, INVALID_NAME_LINE, isFunctionsSource } from '../../lib/functions/build.ts';
import { rootPrefix } from '../../lib/sites/root-directory.ts';
import { functionIdFor } from '../../lib/functions/records.ts';

describe('functions build rules', () => {
  it('reads root_directory as a manifest path prefix', () => {
    expect(rootPrefix(null)).toBe('');
    expect(rootPrefix('')).toBe('');
    expect(rootPrefix('.')).toBe('');
    expect(rootPrefix('/')).toBe('');
    expect(rootPrefix('app')).toBe('app/');
    expect(rootPrefix('./apps/web/')).toBe('apps/web/');
  });

  it('finds the entry points: .js and .ts files directly in functions/', () => {
    const { entries, problems } = functionEntries(
      [
        'index.html',
        'functions/a.js',
        'functions/b-2.ts',
        'functions/lib/c.js',
        'functions/types.d.ts',
        'functions/data.json',
        'other/functions/x.js',
      ],
      '',
    );
    expect(problems).toEqual([]);
    expect(entries).toEqual([
      { name: 'a', path: 'functions/a.js' },
      { name: 'b-2', path: 'functions/b-2.ts' },
    ]);
    expect(functionEntries(['app/functions/a.js', 'functions/b.js'], 'app/').entries).toEqual([{ name: 'a', path: 'app/functions/a.js' }]);
  });

  it('names every file that breaks the name rule, and a .js and .ts sharing a name', () => {
    const { entries, problems } = functionEntries(
      [
        'functions/Upper.js',
        'functions/-dash.js',
        'functions/under_score.ts',
        `functions/${'a'.repeat(129)}.js`,
        'functions/x.js',
        'functions/x.ts',
        'functions/ok.js',
      ],
      '',
    );
    expect(entries.map((e) => e.name)).toEqual(['ok']);
    expect(problems).toHaveLength(5);
    expect(problems.every((line) => line.startsWith('[functions]'))).toBe(true);
    expect(problems.at(-1)).toContain('functions/x.js and functions/x.ts');
    expect(INVALID_NAME_LINE).toBe('[functions] Build failed: invalid function name');
    expect(functionEntries([`functions/${'a'.repeat(128)}.js`], '').problems).toEqual([]);
  });

  it('hides function sources and node_modules under the root only', () => {
    expect(isFunctionsSource('functions/a.js', '')).toBe(true);
    expect(isFunctionsSource('node_modules/x/index.js', '')).toBe(true);
    expect(isFunctionsSource('docs/functions/a.js', '')).toBe(false);
    expect(isFunctionsSource('functions/a.js', 'app/')).toBe(false);
    expect(isFunctionsSource('app/functions/a.js', 'app/')).toBe(true);
  });

  it('derives a stable UUID-shaped function id per project and name', () => {
    const id = functionIdFor('p1', 'hello');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(functionIdFor('p1', 'hello')).toBe(id);
    expect(functionIdFor('p2', 'hello')).not.toBe(id);
    expect(functionIdFor('p1', 'bye')).not.toBe(id);
  });

  it('formats sizes', () => {
    expect(formatBytes(1229)).toBe('1.2 KB');
    expect(formatBytes(900 * 1024)).toBe('900.0 KB');
    expect(formatBytes(1.5 * 1024 * 1024)).toBe('1.5 MB');
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emulatorImports } from '../../bin/check-emulator-imports.mjs';

/** `npm run checks`' rule that production code (handlers/, infra/, lib/ but lib/local/) never reaches local-cloud/. */
const root = mkdtempSync(join(tmpdir(), 'slipway-emulator-imports-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('emulatorImports', () => {
  it('names each production file that imports the emulator, directly, by type or through other files, with its chain', () => {
    write('local-cloud/iam/iam-proxy.ts', 'export const proxy = 1;\n');
    write('local-cloud/runtime.ts', "import { proxy } from './iam/iam-proxy.ts';\nexport const runtime = proxy;\n");
    // The local platform starts the emulator: allowed, and so is a test.
    write('lib/local/platform.ts', "import { runtime } from '../../local-cloud/runtime.ts';\nexport const platform = runtime;\n");
    write('test/support/platform.ts', "export { runtime } from '../../local-cloud/runtime.ts';\n");
    write('lib/config.ts', 'export const config = {};\n');
    write('handlers/http/ok.ts', "import { config } from '../../lib/config.ts';\nexport const handler = config;\n");
    write('handlers/http/direct.ts', "import { proxy } from '../../local-cloud/iam/iam-proxy.ts';\nexport const handler = proxy;\n");
    write('lib/sites/typed.ts', "import type { runtime } from '../../local-cloud/runtime.ts';\nexport type T = typeof runtime;\n");
    write('infra/stack.ts', "export const load = () => import('../lib/local/platform.ts');\n");
    expect(emulatorImports(root).sort((a, b) => a[0]!.localeCompare(b[0]!))).toEqual([
      ['handlers/http/direct.ts', 'local-cloud/iam/iam-proxy.ts'],
      ['infra/stack.ts', 'lib/local/platform.ts', 'local-cloud/runtime.ts'],
      ['lib/sites/typed.ts', 'local-cloud/runtime.ts'],
    ]);
  });
});

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalPlatform } from '../lib/local/platform.ts';
import { assemblyDir, ensureSynthesized } from '../local-cloud/template/assembly.ts';

/** Total bytes of an asset folder, source maps left out (they are uploaded but never loaded without --enable-source-maps' first trace). */
function assetBytes(dir: string): { code: number; maps: number } {
  let code = 0;
  let maps = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const size = statSync(join(entry.parentPath, entry.name)).size;
    if (entry.name.endsWith('.map')) maps += size;
    else code += size;
  }
  return { code, maps };
}

/**
 * Per Lambda of the synthesized template: the size of the asset `cdk deploy`
 * uploads, and the cold import time of that asset in a fresh environment of
 * the synthesized mode (a worker thread with the Lambda's environment), median
 * of three cold starts.
 */
export async function runSynthesizedBench(): Promise<void> {
  await ensureSynthesized((line) => console.log(line));
  const platform = await startLocalPlatform({
    port: 0,
    prefix: `bench${Date.now().toString(36)}`,
    synthesized: { assemblyDir: assemblyDir() },
  });
  try {
    const rows: { name: string; kb: number; mapsKb: number; importMs: number }[] = [];
    for (const host of platform.synthesized!.hosts.values()) {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) times.push(await host.coldStart());
      await host.stop();
      const { code, maps } = assetBytes(host.fn.assetDir);
      rows.push({ name: host.fn.name, kb: code / 1024, mapsKb: maps / 1024, importMs: times.sort((a, b) => a - b)[1]! });
    }
    rows.sort((a, b) => b.kb - a.kb);
    console.log('Lambda                                                         asset KB  (maps KB)  cold import ms');
    const cell = (value: number, width: number) => value.toFixed(0).padStart(width);
    for (const row of rows) console.log(`${row.name.padEnd(62)} ${cell(row.kb, 8)}  ${cell(row.mapsKb, 9)}  ${cell(row.importMs, 14)}`);
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const imports = rows.map((r) => r.importMs);
    console.log(
      `${rows.length} Lambdas: asset median ${median(rows.map((r) => r.kb)).toFixed(0)} KB, ` +
        `cold import median ${median(imports).toFixed(0)} ms, max ${Math.max(...imports).toFixed(0)} ms`,
    );
    for (const skipped of platform.synthesized!.skipped) console.log(`not run: ${skipped.logicalId}: ${skipped.reason}`);
  } finally {
    await platform.stop();
  }
}

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalState } from '../../lib/local/persistence.ts';

/** The State line of `npm run dev`'s banner: which mode's state, where, and when it was saved. */
describe("the local platform's kept state", () => {
  it('says which mode keeps it, where, and when a resumed one was saved, as a time a person reads', () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-state-'));
    const synth = openLocalState({ dir, mode: 'synth' });
    expect(synth.outcome().sentence).toBe(
      `started empty (no saved state); the state is kept in ${dir} (the synthesized mode's state; the source mode (npm run dev) keeps its own)`,
    );
    // What moto writes once it loaded the saved state (lib/local/moto-python/sitecustomize.py).
    const savedAt = new Date(2026, 10, 27, 9, 5, 7).getTime() / 1000 + 0.25;
    writeFileSync(join(dir, 'moto.pickle.status.json'), JSON.stringify({ resumed: true, reason: 'saved earlier', saved_at: savedAt }));
    expect(synth.outcome()).toEqual({
      resumed: true,
      sentence: `resumed the state saved in ${dir} (saved 2026-11-27 09:05:07 local time; the synthesized mode's state; the source mode (npm run dev) keeps its own)`,
    });
    const source = openLocalState({ dir: mkdtempSync(join(tmpdir(), 'slipway-state-')), mode: 'source' });
    expect(source.outcome().sentence).toMatch(/\(the source mode's state; the synthesized mode \(--synth\) keeps its own\)$/);
  });
});

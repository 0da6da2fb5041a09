/**
 * How much slower than a quiet machine this run may be (`TEST_TIME_SCALE`, 1 unless set): every wall-clock budget a
 * test gives (a wait's deadline, a timeout) is multiplied by it, so a loaded machine waits longer instead of failing.
 * A test asserts states, never how fast they came; where a budget is what is tested, it is scaled too.
 */
export const timeScale = (() => {
  const value = Number(process.env.TEST_TIME_SCALE);
  return Number.isFinite(value) && value > 0 ? value : 1;
})();

/** A budget of `ms` on a quiet machine, scaled by `TEST_TIME_SCALE`. */
export const scaled = (ms: number): number => Math.round(ms * timeScale);

/** Polls `check` every 100 ms until it holds; past `ms` (scaled), fails naming what it waited for. */
export async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + scaled(ms);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Counts kept in memory and written out now and then (functions telemetry,
 * site analytics): flushes run one after another, never two at once, every
 * `intervalMs` once started; the timer never keeps a process alive, and
 * `stop()` writes what is left.
 */
export class PeriodicFlush {
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly writeOut: () => Promise<void>,
    private readonly intervalMs: () => number,
  ) {}

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeOut());
    return this.flushing;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.intervalMs());
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

import { platformEnv } from './config.ts';

/**
 * Counts kept in memory and written out now and then (functions telemetry,
 * site analytics): flushes run one after another, never two at once, every
 * `intervalMs` once started; the timer never keeps a process alive, and
 * `stop()` writes what is left.
 */
export class PeriodicFlush {
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** The platform whose counts these are (lib/config.ts): each write goes to its resources, whoever calls. */
  private readonly platform = platformEnv();

  constructor(
    private readonly writeOut: () => Promise<void>,
    private readonly intervalMs: () => number,
  ) {}

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.platform.run(this.writeOut));
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

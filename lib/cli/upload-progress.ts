import cliProgress from 'cli-progress';
import { interactive } from './args.ts';

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** What a deploy shows while it uploads: a bar at a terminal, a line before and after elsewhere. */
export class UploadProgress {
  private bar: cliProgress.SingleBar | null = null;
  private files = 0;
  private bytes = 0;
  private readonly started = Date.now();

  constructor(
    private readonly out: NodeJS.WriteStream | undefined,
    private readonly totalFiles: number,
    private readonly totalBytes: number,
  ) {}

  start(known: number): void {
    if (!this.out) return;
    if (interactive(this.out) && this.totalFiles > 0) {
      this.bar = new cliProgress.SingleBar(
        {
          stream: this.out,
          format: 'Uploading [{bar}] {percentage}% | {value}/{total} files | {sent}/{size}',
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(this.totalFiles, 0, { sent: mb(0), size: mb(this.totalBytes) });
    } else {
      this.out.write(`Uploading ${this.totalFiles} files (${mb(this.totalBytes)}); ${known} already on the platform.\n`);
    }
  }

  fileSent(size: number): void {
    this.files++;
    this.bytes += size;
    this.bar?.update(this.files, { sent: mb(this.bytes) });
  }

  stop(): void {
    if (!this.out) return;
    if (this.bar) this.bar.stop();
    else this.out.write(`Uploaded ${this.files} files (${mb(this.bytes)}) in ${((Date.now() - this.started) / 1000).toFixed(1)} s.\n`);
  }
}

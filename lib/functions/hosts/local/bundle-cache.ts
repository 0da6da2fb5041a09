import { createHash } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeployedFunction } from '../../model.ts';

/** The bundles instances load, on disk under the host's folder by sha256, each loaded once per deployment. */
export class BundleCache {
  private readonly folder: string;
  private readonly paths = new Map<string, Promise<string>>();

  constructor(
    root: string,
    private readonly loadBundle: (fn: DeployedFunction) => Promise<Buffer>,
  ) {
    this.folder = join(root, 'bundles');
    mkdirSync(this.folder, { mode: 0o711 });
    chmodSync(this.folder, 0o711);
  }

  /** The bundle's file, written on first use. */
  pathOf(fn: DeployedFunction): Promise<string> {
    const cacheKey = `${fn.deployment_id}/${fn.function_id}/${fn.bundle_sha256}`;
    let path = this.paths.get(cacheKey);
    if (!path) {
      path = this.write(fn);
      this.paths.set(cacheKey, path);
      path.catch(() => this.paths.delete(cacheKey));
    }
    return path;
  }

  private async write(fn: DeployedFunction): Promise<string> {
    const bytes = await this.loadBundle(fn);
    const sha = createHash('sha256').update(bytes).digest('hex');
    const file = join(this.folder, `${sha}.mjs`);
    if (!existsSync(file)) {
      writeFileSync(`${file}.tmp`, bytes, { mode: 0o644 });
      rmSync(file, { force: true });
      linkSync(`${file}.tmp`, file);
      rmSync(`${file}.tmp`, { force: true });
    }
    return file;
  }
}

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import pLimit from 'p-limit';
import { type HashCache, statFacts } from './hash-cache.ts';
import type { SiteFile } from './site-file.ts';

/** Files hashed at once: enough to keep the disk busy, few enough to bound open descriptors. */
const HASH_CONCURRENCY = 32;

/** SHA-256 of a file, read as a stream: memory stays flat whatever the size. */
export function hashFile(absolute: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(absolute, { highWaterMark: 256 * 1024 })
      .on('data', (chunk) => hash.update(chunk as Buffer))
      .on('end', () => resolvePromise(hash.digest('hex')))
      .on('error', reject);
  });
}

/** Files up to this size are read whole and hashed in one call: for the many small files of a site, a stream's setup costs more than the read. */
const WHOLE_READ_MAX_BYTES = 1024 * 1024;

async function hashSmallFile(absolute: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(absolute))
    .digest('hex');
}

/**
 * Every file's hash: from the cache when the file's stat facts are those it was hashed under, else read and
 * hashed (and recorded). `read` counts the files read.
 */
export async function hashSiteFiles(files: Omit<SiteFile, 'hash'>[], cache?: HashCache): Promise<{ files: SiteFile[]; read: number }> {
  const limit = pLimit(HASH_CONCURRENCY);
  let read = 0;
  const hashed = await Promise.all(
    files.map((file) => {
      // A cache hit costs no I/O: answered at once, outside the limit.
      const cached = file.facts && cache?.lookup(file.path, file.facts);
      if (cached) return { ...file, hash: cached };
      return limit(async () => {
        const facts = file.facts ?? (cache ? statFacts(await stat(file.absolute, { bigint: true })) : undefined);
        const hit = !file.facts && facts && cache?.lookup(file.path, facts);
        if (hit) return { ...file, hash: hit };
        const hash = file.size <= WHOLE_READ_MAX_BYTES ? await hashSmallFile(file.absolute) : await hashFile(file.absolute);
        read++;
        if (facts) cache?.record(file.path, facts, hash);
        return { ...file, hash };
      });
    }),
  );
  return { files: hashed, read };
}

import { deleteKeys, listKeysPage } from './s3-lite.ts';

/** Every key under a prefix. */
export async function listKeys(bucket: string, prefix: string): Promise<Set<string>> {
  const found = new Set<string>();
  let token: string | undefined;
  do {
    const page = await listKeysPage(bucket, prefix, token);
    for (const key of page.keys) found.add(key);
    token = page.next;
  } while (token);
  return found;
}

/** Deletes every object under a prefix, a listing page at a time. */
export async function deletePrefix(bucket: string, prefix: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await listKeysPage(bucket, prefix, token);
    await deleteKeys(bucket, page.keys);
    token = page.next;
  } while (token);
}

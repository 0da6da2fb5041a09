import { randomBytes } from 'node:crypto';

// W3C Trace Context: version-traceid-parentid-flags, lowercase hex.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The trace id of an incoming `traceparent` header when it is valid (version
 * ff and all-zero ids are invalid per the W3C spec), else a fresh one.
 */
export function traceIdFrom(traceparent: string | undefined): string {
  const match = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null;
  if (match) {
    const [, version, traceId, parentId] = match as unknown as [string, string, string, string];
    if (version !== 'ff' && !/^0+$/.test(traceId) && !/^0+$/.test(parentId)) return traceId;
  }
  return randomBytes(16).toString('hex');
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DoorRequest, OpenDoorReply } from './door.ts';

/**
 * A Node HTTP request as the door's request, its body the request stream itself (never buffered here: the door
 * counts it as it arrives and refuses it past 10 MiB). The caller is gone when the response closes before the
 * reply has been written. Used by the local platform's door and the cloud's container door alike.
 */
export function doorRequestOfIncoming(req: IncomingMessage, res: ServerResponse, hostname: string): DoorRequest {
  // The response's own close event, not an AbortController: a signal (an EventTarget) per request was a tenth
  // of the door's warm CPU, and the door makes one per call already (its budget).
  const onCallerGone = (onGone: () => void): void => {
    if (res.closed) {
      if (!res.writableFinished) onGone();
    } else
      res.once('close', () => {
        if (!res.writableFinished) onGone();
      });
  };
  const headers: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
  const method = (req.method ?? 'GET').toUpperCase();
  return {
    hostname,
    method,
    target: req.url ?? '/',
    headers,
    body: method === 'GET' || method === 'HEAD' ? null : req,
    onCallerGone,
  };
}

/** The door's reply head written on a Node response (each Set-Cookie its own header line), which then takes the body. */
export function openNodeReply(res: ServerResponse): OpenDoorReply {
  return (head) => {
    const out: Record<string, string | string[]> = { ...head.headers };
    if (head.cookies.length > 0) out['set-cookie'] = head.cookies;
    res.writeHead(head.statusCode, out);
    return res;
  };
}

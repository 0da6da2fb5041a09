// The door <-> runner protocol, imported by every side: the runner (plain
// JavaScript run by node inside the sandbox, with no other files than its
// folder's), the local host (lib/functions/hosts/local/), the cloud host and
// the Lambda entry (lib/functions/hosts/cloud/) and the door (lib/functions/door.ts).
// Node built-ins only; its types are protocol.d.mts.

import { Buffer } from 'node:buffer';
import { Readable } from 'node:stream';

/** The internal reply header that says how the handler's call ended; the host strips it. */
export const OUTCOME_HEADER = 'x-slipway-runner-outcome';
/** The cloud runner's report beside the outcome (the Lambda entry's prelude headers). */
export const RUNNER_COLD_START_HEADER = 'x-slipway-runner-cold-start';
export const RUNNER_BOOT_MS_HEADER = 'x-slipway-runner-boot-ms';
export const RUNNER_INSTANCE_HEADER = 'x-slipway-runner-instance';
/** The thrown error ({message, stack} as JSON) of a handler_error, for the door's live tail; never the caller's. */
export const RUNNER_ERROR_HEADER = 'x-slipway-runner-error';
/**
 * The body of a call a live tail watches, from the Lambda entry to the cloud door (hosts/cloud/runner-stream.ts):
 * each piece as a 4-byte big-endian length and its bytes, a zero length where the body ends, then the call's
 * console lines ([{at, stream, line}]) as one JSON array to the end of the stream.
 */
export const TAILED_LENGTH_BYTES = 4;

export function tailedBodyPiece(piece) {
  const length = Buffer.alloc(TAILED_LENGTH_BYTES);
  length.writeUInt32BE(piece.length, 0);
  return Buffer.concat([length, piece]);
}

export function tailedBodyEnd(lines) {
  return Buffer.concat([Buffer.alloc(TAILED_LENGTH_BYTES), Buffer.from(JSON.stringify(lines))]);
}

/** Headers between the door and the runner start with it: never given to the handler nor taken from it. */
export const INTERNAL_HEADER_PREFIX = 'x-slipway-';

/**
 * Connection-level headers (RFC 9110 7.6.1 and the proxy ones of RFC 9110 11.7): each hop's own, never
 * forwarded either way, neither by the door nor by the runner.
 */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-authenticate',
]);

/**
 * The instance socket's framing (door to instance and back). The door keeps
 * one connection to an instance and carries all its requests on it as
 * streams, so the frames of the requests that arrive together leave together
 * in one write each way (a write is a system call, and on these machines
 * system calls are most of what a small request costs). Each frame is a type
 * byte, a 32-bit big-endian stream id (the door numbers its requests), a
 * 32-bit big-endian payload length and the payload:
 *   HEAD    door: {"m":method,"q":query,"h":[[name,value],...]} (JSON);
 *           instance: {"s":status,"h":[[name,value],...],"o":outcome} (JSON)
 *   BODY    a chunk of a body, as it comes (at most MAX_FRAME_BODY bytes)
 *   END     this side's body is over (every request and reply ends with one)
 *   RESET   this side gives the stream up: before the reply's END, the reply
 *           is cut (the instance: its body failed; the door: nobody reads it
 *           any more); after it, the rest of the request body is not wanted
 *   CREDIT  4-byte count: the sender of this frame has taken that many more
 *           bytes of the stream's body (flow control, per stream and way)
 * A body's sender may have at most STREAM_WINDOW bytes not yet credited, so
 * one slow reader holds back its own stream only, never the others. The
 * connection closing ends every stream on it (the instance died).
 */
export const FRAME = Object.freeze({ HEAD: 1, BODY: 2, END: 3, RESET: 4, CREDIT: 5 });
export const FRAME_HEADER_BYTES = 9;
export const MAX_FRAME_BODY = 64 * 1024;
export const STREAM_WINDOW = 256 * 1024;
const EMPTY = Buffer.alloc(0);

/** One frame's bytes. */
export function encodeFrame(type, stream, payload = EMPTY) {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  out[0] = type;
  out.writeUInt32BE(stream, 1);
  out.writeUInt32BE(payload.length, 5);
  if (payload.length > 0) out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/** A CREDIT frame's payload. */
export function creditPayload(bytes) {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(bytes, 0);
  return out;
}

/** A `data` listener that calls onFrame(type, stream, payload) for each whole frame received. */
export function frameParser(onFrame) {
  // A frame split over many reads is joined once, when all of it has come.
  let parts = [];
  let buffered = 0;
  let needed = FRAME_HEADER_BYTES;
  return (chunk) => {
    parts.push(chunk);
    buffered += chunk.length;
    if (buffered < needed) return;
    const data = parts.length === 1 ? parts[0] : Buffer.concat(parts, buffered);
    parts = [];
    buffered = 0;
    needed = FRAME_HEADER_BYTES;
    let at = 0;
    while (data.length - at >= FRAME_HEADER_BYTES) {
      const length = data.readUInt32BE(at + 5);
      if (data.length - at - FRAME_HEADER_BYTES < length) {
        needed = FRAME_HEADER_BYTES + length;
        break;
      }
      const type = data[at];
      const stream = data.readUInt32BE(at + 1);
      const payload = data.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + length);
      at += FRAME_HEADER_BYTES + length;
      onFrame(type, stream, payload);
    }
    if (at < data.length) {
      parts.push(data.subarray(at));
      buffered = data.length - at;
    }
  };
}

/**
 * Writes frames to a socket, gathering those of one event-loop turn into one
 * write. Socket back-pressure is not waited for: the stream windows bound
 * what can be queued.
 */
export function frameWriter(socket) {
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  return (type, stream, payload) => {
    if (socket.destroyed) return;
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    socket.write(encodeFrame(type, stream, payload));
  };
}

/** The sending side of one body: how many bytes the peer still takes. */
export class SendWindow {
  constructor(size = STREAM_WINDOW) {
    this.available = size;
    this.closed = false;
    this.waiter = null;
  }
  grant(bytes) {
    this.available += bytes;
    this.wake();
  }
  close() {
    this.closed = true;
    this.wake();
  }
  wake() {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
  /** Resolves true once bytes may be sent, false once the stream is over. */
  async ready() {
    while (!this.closed && this.available <= 0) await new Promise((resolve) => (this.waiter = resolve));
    return !this.closed;
  }
}

/** Sends a chunk of a body as BODY frames, as the window allows; false when the stream ended first. */
export async function sendBody(write, stream, window, chunk) {
  let rest = chunk;
  while (rest.length > 0) {
    if (!(await window.ready())) return false;
    const size = Math.min(rest.length, window.available, MAX_FRAME_BODY);
    write(FRAME.BODY, stream, rest.subarray(0, size));
    window.available -= size;
    rest = rest.subarray(size);
  }
  return true;
}

/**
 * The receiving side of one body: a Readable fed by the BODY frames, which
 * credits the sender with what its reader has taken.
 */
export function receiveBody(sendCredit) {
  let delivered = 0;
  let credited = 0;
  let ended = false;
  const stream = new Readable({
    highWaterMark: MAX_FRAME_BODY,
    read() {
      // Called when the reader wants more: everything it took so far is credited.
      if (ended) return;
      const taken = delivered - stream.readableLength;
      if (taken > credited) {
        sendCredit(taken - credited);
        credited = taken;
      }
    },
  });
  return {
    stream,
    get ended() {
      return ended;
    },
    push(chunk) {
      if (ended || stream.destroyed) return;
      delivered += chunk.length;
      stream.push(Buffer.from(chunk));
    },
    end() {
      if (ended) return;
      ended = true;
      if (!stream.destroyed) stream.push(null);
    },
    fail(error) {
      ended = true;
      if (!stream.destroyed) stream.destroy(error);
    },
  };
}

/** A body nobody reads: its frames are counted out, no stream is made. */
export function discardBody() {
  let ended = false;
  return {
    stream: null,
    get ended() {
      return ended;
    },
    push() {},
    end: () => (ended = true),
    fail: () => (ended = true),
  };
}

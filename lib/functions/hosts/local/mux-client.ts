import { connect, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { FunctionHostError, type DoorForward, type DoorReply } from '../../host.ts';
import {
  creditPayload,
  FRAME,
  frameParser,
  frameWriter,
  HOP_BY_HOP,
  OUTCOME_HEADER,
  receiveBody,
  sendBody,
  SendWindow,
  type FrameWrite,
  type ReceivedBody,
} from '../../runner/protocol.mjs';

/**
 * The mux client: the local host's side of an instance's connection (runner/protocol.mjs). Each request is a
 * stream of the one connection to its instance; the reply is handed to the door once its head has come.
 */

/** One connection to an instance: every request to it is a stream on it (runner/protocol.mjs, FRAME). */
export interface Mux {
  socket: Socket;
  write: FrameWrite;
  streams: Map<number, { onFrame: (type: number, payload: Buffer) => void; onClose: (error: Error) => void }>;
  nextId: number;
}

export function openMux(path: string): Mux {
  const socket = connect(path);
  const mux: Mux = { socket, write: frameWriter(socket), streams: new Map(), nextId: 1 };
  let failure: Error | null = null;
  socket.on('error', (error) => (failure = error));
  socket.on(
    'data',
    frameParser((type, id, payload) => mux.streams.get(id)?.onFrame(type, payload)),
  );
  socket.on('close', () => {
    const error = failure ?? new Error('the instance closed the connection');
    for (const stream of [...mux.streams.values()]) stream.onClose(error);
    mux.streams.clear();
  });
  return mux;
}

/** What a request needs of the instance it goes to (instance-pool.ts Instance). */
export interface MuxTarget {
  id: string;
  bootMs: number;
  mux: Mux | null;
  blank: { sandbox: { httpSocket: string } };
  /** How it died, once known. */
  death?: Promise<'out_of_memory' | 'instance_crashed' | 'stopped'>;
}

export function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  const error = new Error(reason instanceof Error ? reason.message : 'The operation was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

/** The promise, or an AbortError as soon as the signal aborts (the promise runs on). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function failureOf(instance: MuxTarget, error: unknown): Promise<FunctionHostError> {
  // The connection broke: was it the instance dying? Give the exit a moment to be seen.
  const how = await Promise.race([
    instance.death ?? Promise.resolve(null),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref()),
  ]);
  if (how === 'out_of_memory') return new FunctionHostError('out_of_memory', 'the instance went over its 512 MB memory limit');
  if (how === 'instance_crashed' || how === 'stopped')
    return new FunctionHostError('instance_crashed', 'the instance stopped during the request');
  return new FunctionHostError(
    'instance_crashed',
    `the instance connection failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** A reply's head and the body received with it, until it is handed over to the door. */
interface EarlyReply {
  outcome: DoorReply['outcome'];
  status: number;
  headers: [string, string][];
  chunks: Buffer[];
  error?: DoorReply['error'];
}

/** The instance's reply head (its JSON), the connection-level and outcome headers left out; null when malformed. */
function replyHeadOf(payload: Buffer): EarlyReply | 'not_loaded' | null {
  let head: { s: number; h: [string, string][]; o: string; e?: { message?: unknown; stack?: unknown } };
  try {
    head = JSON.parse(payload.toString());
  } catch {
    return null;
  }
  if (head.o === 'not_loaded') return 'not_loaded';
  const outcome = head.o === 'handler_error' || head.o === 'invalid_response' ? head.o : 'response';
  const headers: [string, string][] = [];
  for (const [rawName, value] of head.h) {
    const name = rawName.toLowerCase();
    if (name === OUTCOME_HEADER || HOP_BY_HOP.has(name)) continue;
    headers.push([name, value]);
  }
  const error =
    outcome === 'handler_error' && head.e ? { message: String(head.e.message ?? ''), stack: String(head.e.stack ?? '') } : undefined;
  return { outcome, status: outcome === 'response' ? head.s : 500, headers, chunks: [], ...(error ? { error } : {}) };
}

/** The reply body as a stream fed by its BODY frames, crediting the instance with what the door has read. */
function openReplyBody(mux: Mux, id: number, chunks: Buffer[]): ReceivedBody {
  const received = receiveBody((bytes) => mux.write(FRAME.CREDIT, id, creditPayload(bytes)));
  for (const chunk of chunks) received.push(chunk);
  return received;
}

function doorReplyOf(head: EarlyReply, body: Readable | Buffer, coldStart: boolean, instance: MuxTarget): DoorReply {
  return {
    outcome: head.outcome,
    status: head.status,
    headers: head.headers,
    body,
    coldStart,
    ...(coldStart ? { bootMs: instance.bootMs } : {}),
    instanceId: instance.id,
    ...(head.error ? { error: head.error } : {}),
  };
}

/** The request's HEAD frame: method, query and the headers without the connection-level ones. */
function writeRequestHead(mux: Mux, id: number, forward: DoorForward): void {
  const headers: [string, string][] = [];
  for (const [name, value] of forward.headers) {
    if (HOP_BY_HOP.has(name.toLowerCase())) continue;
    headers.push([name, value]);
  }
  mux.write(FRAME.HEAD, id, Buffer.from(JSON.stringify({ m: forward.method, q: forward.query, h: headers })));
}

/** Sends the request body as the stream's window allows, then END; a failed body gives the stream up. */
async function sendRequestBody(mux: Mux, id: number, window: SendWindow, source: Readable, giveUp: () => void): Promise<void> {
  try {
    for await (const chunk of source) {
      if (!(await sendBody(mux.write, id, window, chunk as Buffer))) {
        source.destroy();
        return;
      }
    }
    if (!window.closed) mux.write(FRAME.END, id);
  } catch {
    giveUp();
  }
}

/**
 * One request as a stream of the instance's connection: resolves with the reply once its head has come (whole
 * when its body came with it). The slot is released when the reply ends or the stream is given up.
 */
export function sendRequest<T extends MuxTarget>(
  instance: T,
  forward: DoorForward,
  signal: AbortSignal,
  coldStart: boolean,
  release: (instance: T) => void,
): Promise<DoorReply> {
  return new Promise<DoorReply>((resolve, reject) => {
    if (!instance.mux || instance.mux.socket.destroyed) instance.mux = openMux(instance.blank.sandbox.httpSocket);
    const mux = instance.mux;
    const id = mux.nextId;
    mux.nextId = mux.nextId >= 0xffff_ffff ? 1 : mux.nextId + 1;
    const stream = new MuxStream(mux, id, instance, signal, coldStart, release, resolve, reject);
    mux.streams.set(id, stream);
    // The stream is its own abort listener (handleEvent): no function to make per request.
    signal.addEventListener('abort', stream, { once: true });
    writeRequestHead(mux, id, forward);
    if (!forward.body) {
      mux.write(FRAME.END, id);
      return;
    }
    void sendRequestBody(mux, id, stream.window, forward.body, () => {
      if (!stream.over) stream.giveUp();
    });
  });
}

/**
 * A request's stream on the connection: its state from the request's head to the reply's end. Methods of one
 * object, not closures: under tsx (keepNames) a named arrow costs a defineProperty per request.
 */
class MuxStream<T extends MuxTarget> {
  /** How much more of the request body the instance takes. */
  readonly window = new SendWindow();
  reply: ReceivedBody | null = null;
  /** The reply's head and the body received with it, until it is handed over. */
  early: EarlyReply | null = null;
  replyEnded = false;
  over = false;
  settled = false;

  constructor(
    readonly mux: Mux,
    readonly id: number,
    readonly instance: T,
    readonly signal: AbortSignal,
    readonly coldStart: boolean,
    readonly release: (instance: T) => void,
    readonly resolve: (reply: DoorReply) => void,
    readonly reject: (error: Error) => void,
  ) {}

  // The slot is held until the reply ends (or the stream is given up): a handler still running counts.
  finish(): void {
    if (this.over) return;
    this.over = true;
    this.mux.streams.delete(this.id);
    this.window.close();
    this.release(this.instance);
  }

  settle(fn: () => void): void {
    if (!this.settled) {
      this.settled = true;
      this.signal.removeEventListener('abort', this);
      fn();
    }
  }

  giveUp(): void {
    this.mux.write(FRAME.RESET, this.id);
    this.finish();
  }

  deliver(): void {
    const head = this.early!;
    this.early = null;
    // The door stopped waiting meanwhile: the reply is not wanted.
    if (this.settled) {
      if (!this.replyEnded) this.giveUp();
      return;
    }
    // The connection broke right after the head: onClose's failure settles it.
    if (this.over && !this.replyEnded) return;
    let body: Readable | Buffer;
    if (this.replyEnded) body = head.chunks.length === 1 ? head.chunks[0]! : Buffer.concat(head.chunks);
    else {
      const received = (this.reply = openReplyBody(this.mux, this.id, head.chunks));
      // The door went away mid-body: the instance stops the body, the slot is free.
      received.stream.on('close', () => {
        if (!this.replyEnded && !this.over) this.giveUp();
      });
      body = received.stream;
    }
    this.settle(() => this.resolve(doorReplyOf(head, body, this.coldStart, this.instance)));
  }

  // The door stops waiting (the signal's abort event); the handler runs on. Its reply, when it comes, is given up.
  handleEvent(): void {
    this.settle(() => this.reject(abortError(this.signal)));
  }

  onFrame(type: number, payload: Buffer): void {
    if (type === FRAME.HEAD) this.onHead(payload);
    else if (type === FRAME.BODY) {
      if (this.reply) this.reply.push(payload);
      else this.early?.chunks.push(payload);
    } else if (type === FRAME.END) {
      this.replyEnded = true;
      this.reply?.end();
      this.finish();
    } else if (type === FRAME.CREDIT && payload.length === 4) {
      this.window.grant(payload.readUInt32BE(0));
    } else if (type === FRAME.RESET) {
      // After the reply's end: the rest of the request body is not wanted. Before: the runner cut the reply.
      this.window.close();
      if (this.replyEnded) return;
      const cut = new FunctionHostError('instance_crashed', "the function's reply stream failed");
      if (!this.settled) this.settle(() => this.reject(cut));
      else this.reply?.fail(cut);
      this.finish();
    }
  }

  onHead(payload: Buffer): void {
    const head = replyHeadOf(payload);
    if (head === null) {
      this.mux.socket.destroy(new Error('the instance sent a malformed reply head'));
      return;
    }
    if (head === 'not_loaded') {
      this.settle(() => this.reject(new FunctionHostError('instance_crashed', 'the instance has no bundle loaded')));
      return;
    }
    // The door stopped waiting (its signal aborted): the reply is not wanted.
    if (this.settled) {
      this.giveUp();
      return;
    }
    // The reply is handed over once the frames read with its head are taken: a small reply's body
    // and END come in the same read, and then it goes whole, with no stream to make and drain.
    this.early = head;
    queueMicrotask(() => this.deliver());
  }

  onClose(error: Error): void {
    // The connection broke before the reply's end: the instance died (or was stopped).
    if (this.over) return;
    const current = this.reply;
    if (!this.settled) void failureOf(this.instance, error).then((failure) => this.settle(() => this.reject(failure)));
    else if (current && !this.replyEnded)
      void failureOf(this.instance, new Error('the reply was cut')).then((failure) => current.fail(failure));
    this.finish();
  }
}

import type { Readable } from 'node:stream';
import type { DeployedFunction, FunctionRecord } from './model.ts';

/**
 * What domain code asks of the machinery that runs functions. The local
 * adapter (lib/functions/hosts/local/) runs the runner in sandboxed child
 * processes; the cloud adapter reaches Lambda and Fargate. The wiring picks
 * one at start; nothing in lib/functions/ spawns a process or calls ECS.
 */
export interface FunctionHost {
  /**
   * HTTPS door: forwards one request to an instance of the function (starting
   * one if none is free; waiting for a slot while all are busy) and resolves
   * once the instance has sent its status and headers. The door owns the
   * budget: when `signal` aborts it stops waiting; the handler is left running.
   */
  forwardHttp(fn: DeployedFunction, request: DoorForward, signal: AbortSignal): Promise<DoorReply>;
  /**
   * HTTPS door: a cap on the function's requests at once that the host's instances do not hold themselves (the
   * cloud: a Lambda environment serves one request, and nothing caps a function's environments). Resolves with
   * the slot's release once this request holds one of the function's slots, waiting while all are taken; rejects
   * when `signal` aborts first. The door gives the slot back when the reply has ended. Absent: the host caps.
   */
  holdRequestSlot?(fn: DeployedFunction, signal: AbortSignal): Promise<() => Promise<void>>;
  /**
   * HTTPS door: makes what a function's first request would otherwise wait for (the cloud: its Lambda, created
   * and Active), called off the request path once a publish has committed. Absent: nothing to prepare (the
   * local host starts its instances on demand).
   */
  prepareHttp?(fn: FunctionRecord): Promise<unknown>;
  /**
   * Queued door: runs one invocation in a fresh sandboxed container of the
   * runner (`once` mode), reads its reply in full and resolves with how it
   * ended. The host owns the budget: at `budgetMs` it stops the container
   * (`timed_out`). When `signal` aborts (the platform stops) the container is
   * stopped and the outcome is `aborted`.
   */
  runQueued(fn: DeployedFunction, request: QueuedRequest, budgetMs: number, signal: AbortSignal): Promise<QueuedResult>;
}

/** What a queued invocation's handler receives (the invoke POST as it came). */
export interface QueuedRequest {
  method: string;
  /** The caller's query string without `?` ('' when none). */
  query: string;
  /** Header pairs, names lower-cased. */
  headers: [string, string][];
  /** The body, already cut at 1 MB. */
  body: Buffer;
  /**
   * The stored invocation it belongs to, when there is one: the cloud host
   * puts the task's result and console under the invocation's prefix, and
   * hands its task the request object there (`requestStored`: already there;
   * a small request is kept in the record instead, and the host stores it).
   */
  invocation?: { id: string; team_id: string; requestStored: boolean };
}

/** How a queued run ended. */
export type QueuedOutcome =
  | DoorOutcome
  | 'timed_out'
  | 'out_of_memory'
  /** The container died without a result (a crash, process.exit). */
  | 'crashed'
  /** The runner could not start or load the bundle. */
  | 'start_failed'
  /** The host stopped (platform shutdown): the invocation is left to the reclaim. */
  | 'aborted';

export interface ConsoleLine {
  at: string;
  stream: 'stdout' | 'stderr';
  line: string;
}

export interface QueuedResult {
  outcome: QueuedOutcome;
  /** The handler's reply (a bare 500 for handler_error and invalid_response); absent when none came. */
  reply: { status: number; headers: [string, string][]; body: Buffer } | null;
  console: ConsoleLine[];
  runtimeMs: number;
}

export interface DoorForward {
  method: string;
  /** The caller's query string without `?` ('' when none). */
  query: string;
  /** Header pairs as received, names lower-cased; `host` is the function's hostname. */
  headers: [string, string][];
  /** The request body (already bounded by the door at 10 MiB); null for GET/HEAD. */
  body: Readable | null;
  /** A live tail watches this function: a host that gathers console lines per call returns them (DoorReply.console). */
  tail?: boolean;
}

/** How the handler's call ended, as the runner reports it. */
export type DoorOutcome =
  /** A Response: status, headers and body are the handler's. */
  | 'response'
  /** The handler threw or its promise rejected: the reply is a bare 500. */
  | 'handler_error'
  /** The handler returned something that is not a Response: a bare 500. */
  | 'invalid_response';

export interface DoorReply {
  outcome: DoorOutcome;
  status: number;
  /** Header pairs; several `set-cookie` stay several pairs. */
  headers: [string, string][];
  /** The body as it comes, or a Buffer when all of it had come with the head. */
  body: Readable | Buffer;
  /** True when this request waited for an instance to start. */
  coldStart: boolean;
  /** Milliseconds the instance took to start, when coldStart. */
  bootMs?: number;
  /** Which instance answered (telemetry). */
  instanceId: string;
  /** The error the handler threw (handler_error), for the live tail; never the caller's. */
  error?: { message: string; stack: string };
  /**
   * The handler's console lines of this call, when the host gathers them per call (the cloud, where an
   * environment serves one request) and the door asked for them (`DoorForward.tail`). Complete once the body ended.
   */
  console?: ConsoleLine[];
}

/** Why a host could not produce a reply. */
export type HostFailureKind =
  /** The instance died during the request (its memory cap, a crash). */
  | 'instance_crashed'
  | 'out_of_memory'
  /** No instance could be started (bundle missing, sandbox failed). */
  | 'start_failed';

export class FunctionHostError extends Error {
  constructor(
    readonly kind: HostFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'FunctionHostError';
  }
}

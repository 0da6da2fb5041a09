import type { FunctionHost } from './host.ts';

/**
 * Which FunctionHost runs queued invocations. The wiring picks it once, at
 * start: the local platform registers its sandboxed host here; a deployed
 * worker registers nothing and gets the cloud host its handler names.
 */
let selected: FunctionHost | null = null;

export function useQueuedFunctionHost(host: FunctionHost | null): void {
  selected = host;
}

export function queuedFunctionHost(fallback: () => FunctionHost): FunctionHost {
  return selected ?? fallback();
}

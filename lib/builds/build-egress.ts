import {
  egressRefusalMessages,
  startEgressProxy,
  UPSTREAM_CONNECT_TIMEOUT_MS,
  type EgressProxy,
  type EgressRefusalEvent,
  type EgressUnreachableEvent,
} from '../sandbox/egress-proxy.ts';

/**
 * A build's egress proxy, the same in every build host: locally the platform runs it outside the sandbox, in the
 * cloud the build script runs it in the CodeBuild container (bundled into the image as egress.mjs,
 * lib/builds/script-image.ts). Every connection it refuses or cannot make is a line of the build's log: a build
 * waiting on an unreachable registry must say so, and a blackholed address is given up after
 * UPSTREAM_CONNECT_TIMEOUT_MS instead of the OS's connect timeout (two minutes and more, per attempt).
 */
export function refusedConnectionLine({ target, reason }: EgressRefusalEvent): string {
  return `Outbound connection to ${target} refused: ${egressRefusalMessages[reason]}`;
}

export function unreachableConnectionLine({ target, address, error }: EgressUnreachableEvent): string {
  const why = error === 'connect timeout' ? `no answer within ${UPSTREAM_CONNECT_TIMEOUT_MS / 1000} s` : error;
  return `Outbound connection to ${target} (${address}) failed: ${why}.`;
}

/** Starts a build's egress proxy on a unix socket; `log` takes each refused or failed connection's line. */
export function startBuildEgress(socketPath: string, log: (line: string) => void): Promise<EgressProxy> {
  return startEgressProxy({
    socketPath,
    onRefused: (event) => log(refusedConnectionLine(event)),
    onUnreachable: (event) => log(unreachableConnectionLine(event)),
  });
}

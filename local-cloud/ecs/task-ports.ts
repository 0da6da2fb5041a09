import { freePort } from '../../lib/local/ports.ts';
import { ContainerStartError, type ContainerDefinition } from './containers.ts';

/**
 * Local difference: on Fargate each task has its own network interface, so every task of a service listens on the
 * container port its definition maps (the door's 8080). Here the tasks share the machine's network, so each mapped
 * container port gets a free loopback port of its own, and the container learns it through the one variable of
 * its environment whose value is that port number (the door's SLIPWAY_DOOR_PORT=8080). `environment` is changed
 * in place; the returned map says which loopback port stands for which container port.
 */
export async function mapContainerPorts(
  definition: ContainerDefinition,
  environment: Record<string, string>,
): Promise<Map<number, number>> {
  const ports = new Map<number, number>();
  for (const { ContainerPort: containerPort } of definition.PortMappings ?? []) {
    const names = Object.keys(environment).filter((name) => environment[name] === String(containerPort));
    if (names.length !== 1) {
      throw new ContainerStartError(
        `port mapping ${containerPort} of container ${definition.Name}: ${names.length} variables of its environment hold ` +
          `${containerPort} (${names.join(', ') || 'none'}); tasks share this machine's network, so the container must read ` +
          'each mapped port from exactly one variable, which is set to a free loopback port',
      );
    }
    const port = await freePort();
    environment[names[0]!] = String(port);
    ports.set(containerPort, port);
  }
  return ports;
}

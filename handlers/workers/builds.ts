import { loadSecrets } from '../../lib/aws/secrets.ts';
import { createCloudBuildHost } from '../../lib/builds/cloud-host.ts';
import { buildsWorker } from '../../lib/builds/builds-worker.ts';
import type { BuildHost } from '../../lib/builds/host.ts';

// Environment variables are decrypted for a build; a forge token is signed with the forge signing key.
await loadSecrets(['envEncryption', 'forgeSigning']);

/**
 * The builds queue's consumer in the stack (lib/workers.ts row `builds`): the worker of
 * lib/builds/builds-worker.ts on the CodeBuild host. The local platform runs the same worker on its
 * sandboxed host (lib/local/builds/builds-runtime.ts).
 */
let cloud: BuildHost | null = null;

export const handler = buildsWorker(() => (cloud ??= createCloudBuildHost()));

import { afterAll, beforeAll } from 'vitest';

/**
 * Files of a project that shares its workers' module graph (`isolate: false`) run one after another in one process:
 * whatever a file sets in `process.env` (a knob of the platform it starts) is taken back when it ends, so the next
 * file starts from the same environment.
 */
let snapshot: NodeJS.ProcessEnv = {};

beforeAll(() => {
  snapshot = { ...process.env };
});

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in snapshot)) delete process.env[name];
  Object.assign(process.env, snapshot);
});

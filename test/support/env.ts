/**
 * Runs `work` with the process environment's variables `env` set (the platform reads its settings at call
 * time, so a setting changed here holds for what `work` does), then puts back what was there before: the
 * earlier value, or no variable.
 */
export async function withEnv<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

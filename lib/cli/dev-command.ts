import { statSync } from 'node:fs';
import { parse } from './args.ts';
import { findFunctionSources, fromAppLine } from './function-sources.ts';
import { CliError, UsageError } from './operator-env.ts';
import { folderKey } from './settings.ts';
import { projectNameFor } from './sites.ts';
import { cliConfig } from './config.ts';

/** The Node line functions run on once deployed (Lambda's nodejs22.x, the runner image): the one `dev` runs them on. */
export const FUNCTIONS_NODE_MAJOR = 22;

/**
 * `slipway dev` runs each function on the Node running the CLI, with that line's flags (`--permission`,
 * NODE_USE_ENV_PROXY): on another line the runner would not boot, or would not behave as deployed. One line
 * at start instead of a 500 at every call. The other commands run on any Node the package accepts.
 */
export function refuseOtherNode(version: string, execPath: string): void {
  if (Number(version.replace(/^v/, '').split('.')[0]) === FUNCTIONS_NODE_MAJOR) return;
  throw new CliError(
    `slipway dev needs Node ${FUNCTIONS_NODE_MAJOR}, the Node functions run on once deployed; this is Node ${version} (${execPath}). ` +
      `Install Node ${FUNCTIONS_NODE_MAJOR} (nvm install ${FUNCTIONS_NODE_MAJOR}) and run it with that node.`,
  );
}

/**
 * `slipway dev [DIR]`: serves the folder and its functions on this machine as
 * they would be served once deployed (lib/local/dev-site.ts), until Ctrl-C.
 * No platform, account or deploy.
 */
export const devCommands: Record<string, { usage: string; run: (args: string[]) => Promise<number> }> = {
  dev: {
    usage: 'dev [DIR] [--port N]',
    run: async (args) => {
      const { values: o, positionals } = parse(args, { port: { type: 'string' } }, 1);
      refuseOtherNode(process.version, process.execPath);
      const dir = folderKey(positionals[0] ?? '.');
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new CliError(`${positionals[0] ?? '.'} is not a folder.`);
      const port = Number(o.port ?? cliConfig.devPort() ?? 8888);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, not "${o.port}"`);
      // Loaded on demand: the sandbox and the build are for this command alone.
      const [{ startDevSite }, { subdomainFrom }] = await Promise.all([import('../local/dev-site.ts'), import('../projects/subdomain.ts')]);
      const subdomain = subdomainFrom(projectNameFor(dir));
      // The functions deploy would send (lib/cli/function-sources.ts): the folder's own, else the app's around it.
      const sources = findFunctionSources(dir);
      if (sources?.fromApp) process.stdout.write(`${fromAppLine(dir, sources)}\n`);
      let site;
      try {
        site = await startDevSite({ dir, subdomain, port, functionsBase: sources?.base });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new CliError(`Port ${port} is in use: pick another with --port.`);
        throw error;
      }
      const functions = site.functions();
      process.stdout.write(
        `Serving ${dir} as it would be served once deployed:\n` +
          `  Site:  ${site.siteUrl}  (also http://localhost:${site.port}/)\n` +
          (functions.length > 0
            ? functions.map((f) => `  Function ${f.name}:  ${f.url}\n`).join('')
            : '  No functions (put .js or .ts files in functions/).\n') +
          'Saved files are served at once; a function is rebuilt when its source changes. Ctrl-C stops.\n',
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await site.stop();
      return 0;
    },
  },
};

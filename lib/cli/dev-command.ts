import { statSync } from 'node:fs';
import { parse } from './args.ts';
import { CliError, UsageError } from './operator-env.ts';
import { folderKey } from './settings.ts';
import { projectNameFor } from './sites.ts';
import { cliConfig } from './config.ts';

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
      const dir = folderKey(positionals[0] ?? '.');
      if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new CliError(`${positionals[0] ?? '.'} is not a folder.`);
      const port = Number(o.port ?? cliConfig.devPort() ?? 8888);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number, not "${o.port}"`);
      // Loaded on demand: the sandbox and the build are for this command alone.
      const [{ startDevSite }, { subdomainFrom }] = await Promise.all([import('../local/dev-site.ts'), import('../projects/subdomain.ts')]);
      const subdomain = subdomainFrom(projectNameFor(dir));
      let site;
      try {
        site = await startDevSite({ dir, subdomain, port });
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

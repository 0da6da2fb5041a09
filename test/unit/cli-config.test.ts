import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliConfig, supplyOperatorEnvironment } from '../../lib/cli/config.ts';

const names = [
  'SLIPWAY_API_URL',
  'SLIPWAY_TOKEN',
  'XDG_CONFIG_HOME',
  'SLIPWAY_RETRY_ATTEMPTS',
  'SLIPWAY_HTTP_TIMEOUT_MS',
  'NO_COLOR',
  'CI',
  'TERM',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'SLIPWAY_TEST_LOCAL_ONLY',
];
const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('the CLI configuration', () => {
  it('reads each variable when asked, not once: a change between two calls is seen', () => {
    process.env.SLIPWAY_API_URL = 'http://one.test';
    expect(cliConfig.apiUrl()).toBe('http://one.test');
    process.env.SLIPWAY_API_URL = 'http://two.test';
    expect(cliConfig.apiUrl()).toBe('http://two.test');
  });

  it('takes an empty variable as unset', () => {
    process.env.SLIPWAY_TOKEN = '';
    process.env.XDG_CONFIG_HOME = '';
    expect(cliConfig.token()).toBeUndefined();
    expect(cliConfig.configHome()).toBe(join(homedir(), '.config'));
  });

  it('keeps the default for a number that is not one, and allows 0 where 0 means something (no retry wait)', () => {
    process.env.SLIPWAY_RETRY_ATTEMPTS = 'many';
    expect(cliConfig.retryAttempts(4)).toBe(4);
    process.env.SLIPWAY_RETRY_ATTEMPTS = '0';
    expect(cliConfig.retryAttempts(4)).toBe(0);
    process.env.SLIPWAY_HTTP_TIMEOUT_MS = '0';
    expect(cliConfig.httpTimeoutMs()).toBe(300_000);
  });

  it('draws no progress under NO_COLOR or CI set to anything but 0 or false, nor on a dumb terminal', () => {
    delete process.env.NO_COLOR;
    delete process.env.CI;
    process.env.TERM = 'xterm';
    expect(cliConfig.plainOutput()).toBe(false);
    process.env.CI = 'false';
    expect(cliConfig.plainOutput()).toBe(false);
    process.env.CI = '1';
    expect(cliConfig.plainOutput()).toBe(true);
    delete process.env.CI;
    process.env.TERM = 'dumb';
    expect(cliConfig.plainOutput()).toBe(true);
  });

  it("gives operator commands the local platform's variables where the environment has none, and keeps those it has", () => {
    process.env.AWS_REGION = 'eu-west-1';
    process.env.SLIPWAY_TEST_LOCAL_ONLY = '';
    supplyOperatorEnvironment({ AWS_REGION: 'us-east-1', SLIPWAY_TEST_LOCAL_ONLY: 'from-state' });
    expect(process.env.AWS_REGION).toBe('eu-west-1');
    expect(process.env.SLIPWAY_TEST_LOCAL_ONLY).toBe('from-state');
  });
});

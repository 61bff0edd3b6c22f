/**
 * Real servers for tests (scripts/services/services.js, one module per kind in
 * scripts/services/kinds/). The first call for a kind in a test process starts
 * a private instance, or reuses the one already running for this checkout, or
 * takes the kind's variable as given. The test run's global teardown stops
 * what was started for it.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '../../scripts/services/services.js');

function run(...args: string[]): string {
  return execFileSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 600_000, stdio: ['ignore', 'pipe', 'inherit'] });
}

/**
 * The shared instance of `kind`: its variables (`envVar` holds its URL), also
 * set in process.env so that a second call in this process starts nothing.
 */
export function sharedService(kind: string, envVar: string): Record<string, string> {
  const given = process.env[envVar];
  if (given) return { [envVar]: given }; // its further variables, if any, are the caller's to read from the environment
  const vars = JSON.parse(run('up', kind, '--json', '--for-tests')) as Record<string, string>;
  if (!vars[envVar]) throw new Error(`scripts/services/services.js gave no ${envVar}`);
  Object.assign(process.env, vars);
  return vars;
}

export interface DedicatedService {
  url: string;
  /** The instance's further variables (ports, credentials), as the kind returns them. */
  vars: Record<string, string>;
  /** Stops the server in place (same port and data). */
  stop(): void;
  /** Starts it again after stop(). */
  start(): void;
  /** Stops it for good and deletes its data. */
  drop(): void;
}

/**
 * A private server for one test file alone, for tests that take the server
 * away: the shared one is in use by other test files at the same time, so it is
 * never stopped. drop() it in afterAll (the run's teardown stops what a crashed
 * test left). Needs the machine's binaries even when the variable is set.
 */
export function dedicatedService(kind: string): DedicatedService {
  const { id, url, vars } = JSON.parse(run('dedicated', kind)) as { id: string; url: string; vars: Record<string, string> };
  return {
    url,
    vars,
    stop: () => void run('stop-server', id),
    start: () => void run('start-server', id),
    drop: () => void run('drop', id),
  };
}

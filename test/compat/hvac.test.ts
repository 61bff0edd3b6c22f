/**
 * Debian's hvac (python3-hvac, installed by scripts/compat/python-hvac.js when
 * missing) driven against the real binary, as automation uses it: every call
 * of test/compat/hvac_suite.py must succeed and its answer must be right.
 * Skipped, with the reason printed, only where Python with hvac cannot be had.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startLeaseServer, type LeaseServer } from '../helpers/lease-plugin';
import { scratchDir } from '../helpers/server';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensurePythonHvac } = require('../../scripts/compat/python-hvac.js') as { ensurePythonHvac(): { python?: string; reason?: string } };

jest.setTimeout(300_000);

const env = ensurePythonHvac();
if (!env.python) console.warn(`[compat] hvac suite skipped: ${env.reason}`);
const maybe = env.python ? it : it.skip;

let s: LeaseServer;
afterAll(async () => {
  await s?.stop('SIGKILL');
});

interface CallResult {
  call: string;
  ok: boolean;
  error?: string;
}

function runSuite(python: string, vars: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(python, [join(__dirname, 'hvac_suite.py')], { env: { ...process.env, ...vars }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('exit', (code) => resolve({ code, out, err }));
  });
}

maybe('every hvac call the suite makes succeeds with the right answer', async () => {
  s = await startLeaseServer();
  expect((await s.api('POST', 'lt/roles/r', { ttl: 300, max_ttl: 3600 })).status).toBe(204);
  const run = await runSuite(env.python!, {
    VAULT_ADDR: s.url,
    VAULT_TOKEN: s.rootToken,
    UNSEAL_KEY: s.unsealKeys[0]!,
    AUDIT_FILE: join(scratchDir('sr-hvac-'), 'audit.log'),
    LEASE_MOUNT: 'lt',
  });
  if (run.code !== 0) throw new Error(`hvac suite exited ${run.code}:\n${run.err}`);
  const results = JSON.parse(run.out) as CallResult[];
  if (process.env.COMPAT_REPORT) console.log(results.map((r) => `${r.ok ? 'ok  ' : 'FAIL'} ${r.call}${r.error ? `  (${r.error})` : ''}`).join('\n'));
  expect(results.length).toBeGreaterThan(140);
  expect(results.filter((r) => !r.ok)).toEqual([]);
});

#!/usr/bin/env node
/**
 * `npm test`: runs the unit and end-to-end suites with jest and ends with one
 * plain summary line ("N passed, N failed, N skipped") that CI reads.
 * Usage: node scripts/test.js [unit|e2e] [extra jest args...]
 */
'use strict';
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const root = join(__dirname, '..');
const args = process.argv.slice(2);
const projects = args[0] === 'unit' || args[0] === 'e2e' ? [args.shift()] : ['unit', 'e2e'];
const outDir = mkdtempSync(join(tmpdir(), 'strongroom-test-'));
const outFile = join(outDir, 'results.json');

const jestBin = require.resolve('jest/bin/jest', { paths: [root] });
const run = spawnSync(
  process.execPath,
  [jestBin, '--selectProjects', ...projects, '--maxWorkers=2', '--json', `--outputFile=${outFile}`, ...args],
  { cwd: root, stdio: 'inherit', env: { ...process.env, FORCE_COLOR: process.env.CI ? '0' : process.env.FORCE_COLOR } },
);

let summary = null;
try {
  const r = JSON.parse(readFileSync(outFile, 'utf8'));
  summary = { passed: r.numPassedTests, failed: r.numFailedTests + (r.numRuntimeErrorTestSuites || 0), skipped: r.numPendingTests + r.numTodoTests };
} catch {
  summary = null;
}
rmSync(outDir, { recursive: true, force: true });
if (summary) process.stdout.write(`\n${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped\n`);
process.exit(run.status === null ? 1 : run.status);

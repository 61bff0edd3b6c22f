'use strict';
/**
 * A PostgreSQL for one bench section: STRONGROOM_BENCH_POSTGRES_URL (or STRONGROOM_TEST_PG_URL),
 * a superuser URL, else a private instance of its own from scripts/services/services.js that
 * `release()` stops and deletes, so nothing is left running.
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');

function postgresFor(ctx) {
  const given = process.env.STRONGROOM_BENCH_POSTGRES_URL || process.env.STRONGROOM_TEST_PG_URL;
  if (given) return { url: given, release() {} };
  const script = path.join(ctx.root, 'scripts', 'services', 'services.js');
  const out = execFileSync(process.execPath, [script, 'dedicated', 'postgres'], { encoding: 'utf8', timeout: 600_000 });
  const { id, url } = JSON.parse(out.trim().split('\n').pop());
  return { url, release: () => execFileSync(process.execPath, [script, 'drop', id], { stdio: 'ignore', timeout: 60_000 }) };
}

module.exports = { postgresFor };

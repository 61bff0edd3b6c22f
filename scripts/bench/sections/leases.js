'use strict';
/*
 * Leases (issue 4): N leases through the expiration manager over the real barrier on LevelDB,
 * issued by and revoked through the test lease plugin in its own process
 * (scripts/bench/lease-bench.js, run in a child process; 100,000 leases, 20,000 with --quick).
 * Each figure sits beside a reference measured in the same run:
 *   heap per lease          vs a bare Map of the same ids to numbers;
 *   restore after restart   vs a raw keys-only LevelDB iteration of the due index (no decrypt);
 *   revocations/s, all due  vs the same plugin revoke handler called straight, same concurrency.
 */
const path = require('node:path');
const { execFile } = require('node:child_process');

function leaseBench(ctx, n) {
  const script = path.join(__dirname, '..', 'lease-bench.js');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, '--leases', String(n), '--json'], { maxBuffer: 1 << 20, timeout: 900_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`expiration bench failed: ${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

module.exports = {
  title: 'Leases: memory, restore and mass expiry with the test lease plugin',
  async run(ctx) {
    const n = ctx.quick ? 20_000 : 100_000;
    const r = await leaseBench(ctx, n);
    if (r.pluginRecordedRevocations !== n) ctx.problem(`the plugin recorded ${r.pluginRecordedRevocations} of ${n} revocations`);
    const x = (a, b) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)} ×` : '–');
    return [
      `${ctx.fmt.int(n)} leases issued through the test lease plugin (one gRPC call each) into the expiration manager over the real barrier (AES-GCM) on LevelDB, in a child process; issued at ${ctx.fmt.int(r.issuePerSec)}/s (${ISSUE_NOTE}). Restore is a new manager over the same store, as after a restart or unseal. Revocations go to the plugin's revoke handler (it reads its role and writes a record through the storage callback); the manager allows ${r.revokeInFlight} in flight per mount.`,
      '',
      '| figure | value | reference (same run) | reference value | ratio |',
      '|---|---|---|---|---|',
      `| manager heap per lease, after restore | ${ctx.fmt.int(r.heapBytesPerLease)} B | a bare \`Map\` of the same ids to numbers | ${ctx.fmt.int(r.mapBytesPerLease)} B | ${x(r.heapBytesPerLease, r.mapBytesPerLease)} |`,
      `| restore ${ctx.fmt.int(n)} leases | ${ctx.fmt.int(r.restoreMs)} ms | raw keys-only LevelDB iteration of the due index (the same paged read restore uses), ids indexed, nothing decrypted | ${ctx.fmt.int(r.rawScanMs)} ms | ${x(r.restoreMs, r.rawScanMs)} |`,
      `| revocations/s when all fall due together | ${ctx.fmt.int(r.revocationsPerSec)} | the same revoke handler called straight at ${r.revokeInFlight} in flight (no lease read or delete) | ${ctx.fmt.int(r.directRevokesPerSec)} | ${ctx.fmt.pct(r.revocationsPerSec / r.directRevokesPerSec)} |`,
    ];
  },
};

const ISSUE_NOTE = '64 in flight; each is a plugin call plus one durable barrier batch';

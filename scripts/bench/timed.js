'use strict';
/*
 * The one timed loop of the bench: `concurrency` workers each run `op(worker, i)` back to back
 * (closed loop) through a warm-up whose samples are discarded, then for `measureMs` (or until
 * `requests` measured calls have been issued). Every sample is the latency of one op.
 *
 * `op` resolves to nothing (a success) or to `{ status, detail }` (an HTTP answer: a 2xx counts
 * as a success, anything else as non-2xx with the first one's detail kept); a rejection counts
 * as an error. Used by load.js (HTTP phases) and by every direct-to-the-service ceiling loop
 * (CREATE ROLE, LDAP add, RabbitMQ users, LevelDB puts), so all figures are taken alike.
 */

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

/**
 * @param {{ concurrency: number, warmupMs: number, measureMs: number, requests?: number,
 *           op: (worker: number, i: number) => Promise<void | { status: number, detail?: string }> }} cfg
 */
function timedLoop(cfg) {
  const { concurrency, op } = cfg;
  const requests = cfg.requests ?? 0;
  const latenciesUs = [];
  const statusCounts = {};
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let firstNon2xx = null;
  let firstError = null;
  let measuring = cfg.warmupMs <= 0;
  let stopped = false;
  let issued = 0;
  /** Every op that finished, warm-up included (what a server's CPU time over the whole phase paid for). */
  let finished = 0;
  let measureStart = measuring ? process.hrtime.bigint() : 0n;
  let measureEnd = 0n;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    measureEnd = process.hrtime.bigint();
  };
  const startMeasuring = () => {
    measuring = true;
    measureStart = process.hrtime.bigint();
    if (requests <= 0) setTimeout(stop, cfg.measureMs);
  };

  const worker = async (w) => {
    for (let i = 0; !stopped; i++) {
      if (measuring && requests > 0) {
        if (issued >= requests) break;
        issued++;
      }
      const counted = measuring;
      const t0 = process.hrtime.bigint();
      let outcome;
      try {
        outcome = await op(w, i);
        finished++;
      } catch (err) {
        finished++;
        if (counted) {
          errors++;
          firstError ??= String(err && err.message ? err.message : err);
        }
        continue;
      }
      if (!counted) continue;
      latenciesUs.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (outcome && typeof outcome.status === 'number') {
        const code = outcome.status;
        statusCounts[code] = (statusCounts[code] ?? 0) + 1;
        if (code < 200 || code > 299) {
          non2xx++;
          firstNon2xx ??= `${code} ${outcome.detail ?? ''}`.trim();
          continue;
        }
      }
      ok++;
    }
  };

  if (cfg.warmupMs > 0) setTimeout(startMeasuring, cfg.warmupMs);
  else if (requests <= 0) setTimeout(stop, cfg.measureMs);
  return Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w))).then(() => {
    if (measureEnd === 0n) measureEnd = process.hrtime.bigint();
    const seconds = Number(measureEnd - measureStart) / 1e9;
    const sorted = Float64Array.from(latenciesUs).sort();
    const total = ok + non2xx + errors;
    return {
      concurrency, seconds, total, ok, non2xx, errors, statusCounts, finished,
      rps: total / seconds, okRps: ok / seconds,
      p50Ms: percentile(sorted, 50) / 1000, p90Ms: percentile(sorted, 90) / 1000,
      p99Ms: percentile(sorted, 99) / 1000, maxMs: sorted.length ? sorted[sorted.length - 1] / 1000 : NaN,
      firstNon2xx, firstError,
    };
  });
}

module.exports = { timedLoop, percentile };

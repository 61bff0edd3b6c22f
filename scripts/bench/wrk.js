'use strict';
/*
 * A second load generator for the latency rows: wrk (Debian package `wrk`), one thread, as the
 * performance anchors measured the ceilings. load.js is a Node client whose own event loop adds
 * to every sample; wrk is C, so its c=1 p50 is closer to what the server alone costs. The
 * request (method, headers, body) goes to wrk as a Lua script, written to a temp file per phase.
 * When wrk is not installed the caller says so and skips the rows: nothing here installs it.
 */
const { execFile, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** True when a `wrk` binary answers on PATH. */
function wrkAvailable() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk --version prints its banner and exits 1; only a missing binary is ENOENT.
    return err.code !== 'ENOENT';
  }
}

const luaString = (s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** wrk's latency figures: "1.23ms", "456.78us", "1.02s". */
function toMs(text) {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

/**
 * One closed-loop phase: warm-up run (discarded), then the measured run, each `wrk -t1 -cN`.
 * Returns the fields run.js reads from a load.js phase (okRps, p50Ms, p99Ms, non2xx, errors, finished).
 */
async function wrkLoad({ url, method = 'GET', headers = {}, body = null, concurrency, warmupMs, durationMs }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strongroom-wrk-'));
  const script = path.join(dir, 'request.lua');
  const lines = [`wrk.method = ${luaString(method)}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`wrk.headers[${luaString(k)}] = ${luaString(v)}`);
  if (body !== null) {
    lines.push(`wrk.headers["Content-Type"] = "application/json"`, `wrk.body = ${luaString(body)}`);
  }
  fs.writeFileSync(script, `${lines.join('\n')}\n`);
  const run = (ms) =>
    new Promise((resolve, reject) => {
      const secs = `${Math.max(1, Math.round(ms / 1000))}s`;
      execFile('wrk', ['-t1', `-c${concurrency}`, `-d${secs}`, '--latency', '-s', script, url], { maxBuffer: 1 << 20 }, (err, stdout) =>
        err ? reject(new Error(`wrk failed: ${err.message}`)) : resolve(stdout),
      );
    });
  const requests = (out) => Number(/(\d+) requests in /.exec(out)?.[1] ?? NaN);
  try {
    const warm = warmupMs > 0 ? requests(await run(warmupMs)) : 0;
    const out = await run(durationMs);
    const total = requests(out);
    const seconds = toMs(/requests in ([\d.]+\w+)/.exec(out)?.[1] ?? '') / 1000;
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const errors = socketErrors ? socketErrors.slice(1).reduce((a, x) => a + Number(x), 0) : 0;
    const pct = (p) => toMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)?.[1] ?? '');
    const ok = total - non2xx;
    // finished counts the warm-up too, as load.js does: the CPU per request spans both.
    return { concurrency, total, finished: total + warm, ok, non2xx, errors, okRps: ok / seconds, p50Ms: pct(50), p99Ms: pct(99), firstNon2xx: non2xx ? 'see wrk' : undefined };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { wrkAvailable, wrkLoad };

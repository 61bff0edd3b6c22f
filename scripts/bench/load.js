'use strict';
/*
 * A small keep-alive HTTP load generator. It runs in its own process so it never shares an
 * event loop with the server under test: N concurrent keep-alive connections, each sending
 * its next request when the previous one completes (closed loop), for a fixed duration or a
 * fixed request count, after an optional warm-up whose samples are discarded.
 *
 * Usage:
 *   node scripts/bench/load.js --url http://127.0.0.1:8200/v1/sys/health [-c 32] [-d 3]
 *        [-w 0.5] [-n COUNT] [-m POST] [-b BODY] [-H 'X-Vault-Token: root'] [--json]
 *   node scripts/bench/load.js --config '<json>'      (used by run.js; prints one JSON line)
 *
 * In the url, `{n}` is replaced by a per-request counter (distinct kv paths for writes).
 * Every response is counted by status: non-2xx and socket errors are reported, never
 * folded into the success rate.
 */
const http = require('node:http');

function parseArgs(argv) {
  const cfg = { concurrency: 32, durationMs: 3000, warmupMs: 500, requests: 0, method: 'GET', headers: {}, body: null, url: '' };
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`missing value for ${a}`);
      return v;
    };
    switch (a) {
      case '--config': Object.assign(cfg, JSON.parse(next())); json = true; break;
      case '--url': cfg.url = next(); break;
      case '-c': case '--concurrency': cfg.concurrency = Number(next()); break;
      case '-d': case '--duration': cfg.durationMs = Number(next()) * 1000; break;
      case '-w': case '--warmup': cfg.warmupMs = Number(next()) * 1000; break;
      case '-n': case '--requests': cfg.requests = Number(next()); break;
      case '-m': case '--method': cfg.method = next().toUpperCase(); break;
      case '-b': case '--body': cfg.body = next(); break;
      case '-H': case '--header': {
        const h = next();
        const at = h.indexOf(':');
        if (at < 1) throw new Error(`bad header: ${h}`);
        cfg.headers[h.slice(0, at).trim()] = h.slice(at + 1).trim();
        break;
      }
      case '--json': json = true; break;
      default: throw new Error(`unknown argument: ${a}`);
    }
  }
  if (!cfg.url) throw new Error('--url is required');
  if (!(cfg.concurrency >= 1)) throw new Error('concurrency must be >= 1');
  return { cfg, json };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

function runLoad(cfg) {
  const url = new URL(cfg.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: cfg.concurrency, maxFreeSockets: cfg.concurrency });
  const bodyBuf = cfg.body == null ? null : Buffer.from(cfg.body);
  const headers = { ...cfg.headers };
  if (bodyBuf) {
    headers['content-type'] = headers['content-type'] ?? 'application/json';
    headers['content-length'] = String(bodyBuf.length);
  }
  // URL() percent-encodes the braces of `{n}`; put them back so the template matches.
  const pathTemplate = (url.pathname + url.search).replaceAll('%7Bn%7D', '{n}');
  const templated = pathTemplate.includes('{n}');

  const latenciesUs = [];
  const statusCounts = {};
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let firstNon2xx = null;
  let firstError = null;
  let seq = 0;
  let measuring = cfg.warmupMs <= 0;
  let stopped = false;
  let measureStart = measuring ? process.hrtime.bigint() : 0n;
  let measureEnd = 0n;
  let measuredIssued = 0;

  return new Promise((resolve) => {
    let active = cfg.concurrency;
    const finish = () => {
      if (measureEnd === 0n) measureEnd = process.hrtime.bigint();
      agent.destroy();
      const seconds = Number(measureEnd - measureStart) / 1e9;
      const sorted = Float64Array.from(latenciesUs).sort();
      const total = ok + non2xx + errors;
      resolve({
        url: cfg.url, method: cfg.method, concurrency: cfg.concurrency,
        seconds, total, ok, non2xx, errors, statusCounts,
        rps: total / seconds, okRps: ok / seconds,
        p50Ms: percentile(sorted, 50) / 1000, p90Ms: percentile(sorted, 90) / 1000,
        p99Ms: percentile(sorted, 99) / 1000, maxMs: sorted.length ? sorted[sorted.length - 1] / 1000 : NaN,
        firstNon2xx, firstError,
      });
    };

    const worker = () => {
      if (stopped) {
        if (--active === 0) finish();
        return;
      }
      if (measuring && cfg.requests > 0) {
        if (measuredIssued >= cfg.requests) {
          if (--active === 0) finish();
          return;
        }
        measuredIssued++;
      }
      const counted = measuring;
      const n = seq++;
      const path = templated ? pathTemplate.replaceAll('{n}', String(n)) : pathTemplate;
      const t0 = process.hrtime.bigint();
      const req = http.request({ agent, host: url.hostname, port: url.port, method: cfg.method, path, headers }, (res) => {
        const chunks = [];
        let keep = res.statusCode < 200 || res.statusCode > 299;
        res.on('data', (c) => { if (keep) chunks.push(c); });
        res.on('end', () => {
          if (counted) {
            latenciesUs.push(Number(process.hrtime.bigint() - t0) / 1000);
            const code = res.statusCode;
            statusCounts[code] = (statusCounts[code] ?? 0) + 1;
            if (code >= 200 && code <= 299) ok++;
            else {
              non2xx++;
              if (!firstNon2xx) firstNon2xx = `${code} ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`;
            }
          }
          setImmediate(worker);
        });
        res.on('error', onError);
      });
      function onError(err) {
        if (counted) {
          errors++;
          if (!firstError) firstError = String(err && err.message ? err.message : err);
        }
        setImmediate(worker);
      }
      req.on('error', onError);
      if (bodyBuf) req.end(bodyBuf);
      else req.end();
    };

    const startMeasuring = () => {
      measuring = true;
      measureStart = process.hrtime.bigint();
      if (cfg.requests <= 0) setTimeout(() => { stopped = true; measureEnd = process.hrtime.bigint(); }, cfg.durationMs);
    };
    if (cfg.warmupMs > 0) setTimeout(startMeasuring, cfg.warmupMs);
    else if (cfg.requests <= 0) setTimeout(() => { stopped = true; measureEnd = process.hrtime.bigint(); }, cfg.durationMs);
    for (let i = 0; i < cfg.concurrency; i++) worker();
  });
}

module.exports = { runLoad, percentile };

if (require.main === module) {
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`load.js: ${err.message}\n`);
    process.exit(2);
  }
  runLoad(parsed.cfg).then((r) => {
    if (parsed.json) {
      process.stdout.write(`${JSON.stringify(r)}\n`);
      return;
    }
    process.stdout.write(
      `${r.method} ${r.url} c=${r.concurrency} ${r.seconds.toFixed(2)}s\n` +
      `  requests ${r.total}  ok ${r.ok}  non-2xx ${r.non2xx}  errors ${r.errors}  statuses ${JSON.stringify(r.statusCounts)}\n` +
      `  ${r.rps.toFixed(0)} req/s  p50 ${r.p50Ms.toFixed(3)} ms  p99 ${r.p99Ms.toFixed(3)} ms  max ${r.maxMs.toFixed(3)} ms\n` +
      (r.firstNon2xx ? `  first non-2xx: ${r.firstNon2xx}\n` : '') +
      (r.firstError ? `  first error: ${r.firstError}\n` : ''),
    );
  });
}

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
const { timedLoop, percentile } = require('./timed.js');

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
  let seq = 0;

  const op = () =>
    new Promise((resolve, reject) => {
      const path = templated ? pathTemplate.replaceAll('{n}', String(seq++)) : pathTemplate;
      const req = http.request({ agent, host: url.hostname, port: url.port, method: cfg.method, path, headers }, (res) => {
        const status = res.statusCode;
        const keep = status < 200 || status > 299;
        const chunks = [];
        res.on('data', (c) => { if (keep) chunks.push(c); });
        res.on('end', () => resolve({ status, detail: keep ? Buffer.concat(chunks).toString('utf8').slice(0, 300) : undefined }));
        res.on('error', reject);
      });
      req.on('error', reject);
      if (bodyBuf) req.end(bodyBuf);
      else req.end();
    });

  return timedLoop({ concurrency: cfg.concurrency, warmupMs: cfg.warmupMs, measureMs: cfg.durationMs, requests: cfg.requests, op }).then((r) => {
    agent.destroy();
    return { url: cfg.url, method: cfg.method, ...r };
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

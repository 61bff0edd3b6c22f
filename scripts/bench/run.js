'use strict';
/*
 * `npm run bench`: one run, ratios to ceilings measured in the same run
 * (see /work/shared/anchors/performance.md, section C).
 * Topic benches live in scripts/bench/sections/NAME.js ({ title, run(ctx) } returning
 * markdown lines; ctx gives the running dev server, the ceilings and the helpers);
 * `--only NAME` runs just the ceilings and that section.
 *
 * Every HTTP phase drives load from a separate child process (load.js) so the generator never
 * shares an event loop with the server under test. The ceiling is a bare node:http child
 * (raw-server.js); the system under test is the real binary in dev mode in a temp data dir,
 * killed and removed at the end. Non-2xx responses and socket errors are counted per phase
 * and shown in the table; a phase with any of them is flagged.
 *
 * Flags: --quick (0.2 s warm-up, 1 s measure), -c N (default 32), --keep (keep the data dir),
 * --server-root DIR (run the binary of another built checkout, e.g. main, for an A/B in one run
 * of the same bench code).
 *
 * The c=1 latency rows are measured twice: with load.js and, when the Debian package `wrk` is
 * installed, with wrk (wrk.js), each against a raw ceiling measured by the same client; without
 * wrk the report says so and those rows are left out.
 */
const { spawn, execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const { durablePutMicro } = require('./durable.js');
const { memKb, treeMemKb, cpuUs, findChildren } = require('./proc.js');
const { freePort } = require('../services/lib.js');
const { wrkAvailable, wrkLoad } = require('./wrk.js');
const { SERVER_ENV } = require('./dev-server.js');

const ROOT = path.resolve(__dirname, '..', '..');
const LOAD = path.join(__dirname, 'load.js');
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const KEEP = argv.includes('--keep');
const cIdx = argv.indexOf('-c');
const CONC = cIdx >= 0 ? Number(argv[cIdx + 1]) : 32;
const WARMUP_MS = QUICK ? 200 : 500;
const MEASURE_MS = QUICK ? 1000 : 3000;
const BATCH_ITEMS = 1000;
const BATCH_CONC = 2;
const TOKEN = 'root';
// `--only NAME[,NAME]`: run the ceilings and the named sections (scripts/bench/sections/NAME.js) only;
// the name `main` selects the main phases (health, lookup-self, kv, transit).
const oIdx = argv.indexOf('--only');
const ONLY = oIdx >= 0 ? argv[oIdx + 1].split(',') : null;
const SECTIONS_DIR = path.join(__dirname, 'sections');
const rIdx = argv.indexOf('--server-root');
const SERVER_ROOT = rIdx >= 0 ? path.resolve(argv[rIdx + 1]) : ROOT;

const children = [];
let dataDir = '';

function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  if (dataDir && !KEEP) fs.rmSync(dataDir, { recursive: true, force: true });
}
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

/** Spawn a child and resolve once `match` appears on its stdout (or reject on exit/timeout). */
function spawnUntil(cmd, args, opts, match, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${path.basename(args[0])} did not start in ${timeoutMs} ms\n${out}\n${err}`)), timeoutMs);
    child.stdout.on('data', (c) => {
      out += c;
      const m = match.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    });
    child.stderr.on('data', (c) => { err += c; if (err.length > 20000) err = err.slice(-10000); });
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(args[0])} exited (${code ?? sig}) before ready\n${out}\n${err}`));
    });
  });
}


/**
 * One load phase in a fresh load.js child process. With `cpuPid`, the result also carries that
 * process's CPU µs per request over the whole phase (warm-up included on both sides): a figure a
 * busy shared machine disturbs far less than req/s; with `pluginPid`, the same for the plugin
 * process that serves the phase (pluginCpuUsPerReq).
 */
function load(cfg, cpuPid, pluginPid) {
  const full = { concurrency: CONC, warmupMs: WARMUP_MS, durationMs: MEASURE_MS, ...cfg };
  const before = cpuPid ? cpuUs(cpuPid) : NaN;
  const pluginBefore = pluginPid ? cpuUs(pluginPid) : NaN;
  const withCpu = (r) => ({
    ...r,
    cpuUsPerReq: cpuPid ? (cpuUs(cpuPid) - before) / r.finished : NaN,
    pluginCpuUsPerReq: pluginPid ? (cpuUs(pluginPid) - pluginBefore) / r.finished : NaN,
  });
  if (full.wrk) return wrkLoad(full).then(withCpu);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [LOAD, '--config', JSON.stringify(full)], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`load.js failed: ${err.message}\n${stderr}`));
      resolve(withCpu(JSON.parse(stdout.trim().split('\n').pop())));
    });
  });
}

/**
 * A single request from this process (setup and response checks only, never measured), on a
 * connection of its own: a kept-alive one idle past the server's keep-alive timeout (a long phase
 * in between) can be closed just as it is reused ("socket hang up").
 */
function request(port, method, p, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const headers = { 'X-Vault-Token': TOKEN };
    if (data) Object.assign(headers, { 'content-type': 'application/json', 'content-length': data.length });
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        try { json = text ? JSON.parse(text) : null; } catch { json = null; }
        resolve({ status: res.statusCode, json, text });
      });
    });
    req.on('error', (err) => reject(new Error(`${method} ${p}: ${err.message}`)));
    req.end(data ?? undefined);
  });
}

async function must(port, method, p, body) {
  const r = await request(port, method, p, body);
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${p} -> ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

/** The same work as one transit encrypt, in this process: AES-256-GCM of 64 B, random 96-bit nonce. */
function cryptoLoop(ms) {
  const key = crypto.randomBytes(32);
  const plaintext = crypto.randomBytes(64);
  const deadline = process.hrtime.bigint() + BigInt(ms) * 1_000_000n;
  let ops = 0;
  const t0 = process.hrtime.bigint();
  let now = t0;
  while (now < deadline) {
    for (let i = 0; i < 256; i++) {
      const iv = crypto.randomBytes(12);
      const c = crypto.createCipheriv('aes-256-gcm', key, iv);
      Buffer.concat([iv, c.update(plaintext), c.final(), c.getAuthTag()]);
    }
    ops += 256;
    now = process.hrtime.bigint();
  }
  return ops / (Number(now - t0) / 1e9);
}

const fmtInt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const fmtMs = (n) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const fmtPct = (n) => (Number.isFinite(n) ? `${(n * 100).toFixed(1)} %` : '–');
const fmtMb = (kb) => (Number.isFinite(kb) ? `${(kb / 1024).toFixed(1)} MB` : '–');

async function main() {
  const started = Date.now();
  const rows = [];
  const problems = [];
  const add = (name, r, ceiling, extra = {}) => {
    rows.push({ name, r, ceiling, ...extra });
    if (r.non2xx || r.errors) problems.push(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors; first: ${r.firstNon2xx ?? r.firstError}`);
  };
  // The targets of issue 20, each beside its reference measured in this run (sections add theirs).
  const targets = [];
  const target = (t) => targets.push(t);

  // Ceiling: bare node:http in its own process.
  const raw = await spawnUntil(process.execPath, [path.join(__dirname, 'raw-server.js')], {}, /listening (\d+)/, 10_000);
  const rawPort = Number(raw.match[1]);
  const rawUrl = (p) => `http://127.0.0.1:${rawPort}${p}`;
  const transitBody = JSON.stringify({ plaintext: crypto.randomBytes(64).toString('base64') });

  // The generator must count non-2xx: a forced-404 phase has to report every response as non-2xx.
  const check = await load({ url: rawUrl('/status/404'), concurrency: 4, warmupMs: 0, durationMs: 200 });
  const countsNon2xx = check.total > 0 && check.non2xx === check.total && check.ok === 0;
  if (!countsNon2xx) throw new Error(`load.js does not count non-2xx responses: ${JSON.stringify(check)}`);

  const ceilGet = await load({ url: rawUrl('/v1/sys/health') }, raw.child.pid);
  const ceilPost = await load({ url: rawUrl('/v1/transit/encrypt/b'), method: 'POST', body: transitBody }, raw.child.pid);
  const ceilPost1 = await load({ url: rawUrl('/v1/transit/encrypt/b'), method: 'POST', body: transitBody, concurrency: 1 }, raw.child.pid);
  add('ceiling: raw node:http GET (JSON out)', ceilGet, ceilGet);
  add('ceiling: raw node:http POST (JSON in/out)', ceilPost, ceilPost);
  add('ceiling: raw node:http POST (JSON in/out), c=1', ceilPost1, ceilPost1);
  const WRK = wrkAvailable();
  const ceilPostWrk1 = WRK ? await load({ wrk: true, url: rawUrl('/v1/transit/encrypt/b'), method: 'POST', body: transitBody, concurrency: 1 }, raw.child.pid) : null;
  if (ceilPostWrk1) add('ceiling: raw node:http POST (JSON in/out), c=1, wrk', ceilPostWrk1, ceilPostWrk1);
  raw.child.kill('SIGTERM');

  // The durable-write ceiling: sealed LevelDB puts, sync, 32 in flight (scripts/bench/durable.js).
  const durable = await durablePutMicro({ concurrency: 32, warmupMs: WARMUP_MS, measureMs: MEASURE_MS });

  const cryptoOps = cryptoLoop(QUICK ? 300 : 1000);

  // The real binary, dev mode, temp data dir.
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strongroom-bench-'));
  const port = await freePort();
  const main = path.join(SERVER_ROOT, 'core', 'dist', 'cli', 'main.js');
  const srv = await spawnUntil(
    process.execPath,
    [main, 'server', '-dev', `-dev-listen-address=127.0.0.1:${port}`, `-dev-root-token-id=${TOKEN}`, `-dev-data-dir=${dataDir}`, '-log-level=error'],
    { cwd: SERVER_ROOT, env: SERVER_ENV },
    /Root Token:/,
    30_000,
  );
  const corePid = srv.child.pid;
  await must(port, 'GET', '/v1/sys/health');
  await new Promise((r) => setTimeout(r, 1000));
  const coreIdle = memKb(corePid);
  const kvPids = findChildren(corePid, 'plugins/kv/dist/plugin.js');
  const kvIdle = memKb(kvPids[0]);
  const treeIdle = treeMemKb(corePid);

  const url = (p) => `http://127.0.0.1:${port}${p}`;
  const auth = { 'X-Vault-Token': TOKEN };

  if (!ONLY || ONLY.includes('main')) {
    add('GET /v1/sys/health', await load({ url: url('/v1/sys/health') }, corePid), ceilGet);
    add('GET /v1/auth/token/lookup-self', await load({ url: url('/v1/auth/token/lookup-self'), headers: auth }, corePid), ceilGet);

    await must(port, 'POST', '/v1/secret/data/bench-read', { data: { value: crypto.randomBytes(24).toString('hex') } });
    const kvRead = await load({ url: url('/v1/secret/data/bench-read'), headers: auth }, corePid, kvPids[0]);
    add('kv-v2 read secret/data/bench-read', kvRead, ceilGet);
    const kvWrite = await load({ url: url('/v1/secret/data/bench-{n}'), method: 'POST', headers: auth, body: JSON.stringify({ data: { value: 'x'.repeat(32) } }) }, corePid, kvPids[0]);
    add('kv-v2 write secret/data/bench-{n}', kvWrite, ceilPost);
    target({ name: 'kv-v2 read / raw node:http GET', value: kvRead.okRps, reference: ceilGet.okRps, unit: 'req/s', goal: 0.22 });
    target({ name: 'kv-v2 write / LevelDB sealed put, 32 in flight, sync', value: kvWrite.okRps, reference: durable.okRps, unit: 'req/s', goal: 0.2 });

    await must(port, 'POST', '/v1/sys/mounts/transit', { type: 'transit' });
    await must(port, 'POST', '/v1/transit/keys/b', {});
    const plaintext = crypto.randomBytes(64).toString('base64');
    const enc = await must(port, 'POST', '/v1/transit/encrypt/b', { plaintext });
    const ciphertext = enc.json?.data?.ciphertext;
    if (typeof ciphertext !== 'string') throw new Error(`transit encrypt returned no ciphertext: ${enc.text.slice(0, 300)}`);
    const dec = await must(port, 'POST', '/v1/transit/decrypt/b', { ciphertext });
    if (dec.json?.data?.plaintext !== plaintext) throw new Error('transit decrypt did not round-trip the plaintext');

    const encBody = JSON.stringify({ plaintext });
    const transitPid = findChildren(corePid, 'plugins/transit/dist/plugin.js')[0];
    const transitEnc = await load({ url: url('/v1/transit/encrypt/b'), method: 'POST', headers: auth, body: encBody }, corePid, transitPid);
    add('transit encrypt 64 B', transitEnc, ceilPost, { crypto: true });
    const transitEnc1 = await load({ url: url('/v1/transit/encrypt/b'), method: 'POST', headers: auth, body: encBody, concurrency: 1 }, corePid, transitPid);
    add('transit encrypt 64 B, c=1', transitEnc1, ceilPost1);
    target({ name: 'transit encrypt 64 B / raw node:http POST', value: transitEnc.okRps, reference: ceilPost.okRps, unit: 'req/s', goal: 0.18 });
    target({ name: 'transit encrypt c=1 p50 / raw POST c=1 p50', value: transitEnc1.p50Ms, reference: ceilPost1.p50Ms, unit: 'ms', goal: 3, atMost: true });
    if (ceilPostWrk1) {
      const transitEncWrk1 = await load({ wrk: true, url: url('/v1/transit/encrypt/b'), method: 'POST', headers: auth, body: encBody, concurrency: 1 }, corePid);
      add('transit encrypt 64 B, c=1, wrk', transitEncWrk1, ceilPostWrk1);
      target({ name: 'transit encrypt c=1 p50 / raw POST c=1 p50, both with wrk', value: transitEncWrk1.p50Ms, reference: ceilPostWrk1.p50Ms, unit: 'ms', goal: 3, atMost: true });
    }
    add('transit decrypt 64 B', await load({ url: url('/v1/transit/decrypt/b'), method: 'POST', headers: auth, body: JSON.stringify({ ciphertext }) }, corePid, transitPid), ceilPost, { crypto: true });

    const batchInput = Array.from({ length: BATCH_ITEMS }, () => ({ plaintext: crypto.randomBytes(64).toString('base64') }));
    const batchCheck = await must(port, 'POST', '/v1/transit/encrypt/b', { batch_input: batchInput });
    const results = batchCheck.json?.data?.batch_results;
    const batchOk = Array.isArray(results) && results.length === BATCH_ITEMS && results.every((x) => typeof x.ciphertext === 'string' && !x.error);
    if (!batchOk) problems.push(`transit batch encrypt: response is not ${BATCH_ITEMS} ciphertexts: ${batchCheck.text.slice(0, 300)}`);
    const batch = await load({ url: url('/v1/transit/encrypt/b'), method: 'POST', headers: auth, body: JSON.stringify({ batch_input: batchInput }), concurrency: BATCH_CONC }, corePid, transitPid);
    add(`transit batch encrypt ${BATCH_ITEMS} × 64 B (c=${BATCH_CONC})`, batch, ceilPost, { crypto: true, items: BATCH_ITEMS });
  }

  const coreAfter = memKb(corePid);
  const treeAfter = treeMemKb(corePid);
  const transitPids = findChildren(corePid, 'plugins/transit/dist/plugin.js');

  // Sections: each scripts/bench/sections/*.js exports { title, run(ctx) -> markdown lines }.
  const sectionOut = [];
  const names = fs.existsSync(SECTIONS_DIR)
    ? fs.readdirSync(SECTIONS_DIR).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3)).sort()
    : [];
  for (const name of names) {
    if (ONLY && !ONLY.includes(name)) continue;
    const section = require(path.join(SECTIONS_DIR, `${name}.js`));
    const ctx = {
      quick: QUICK, concurrency: CONC, warmupMs: WARMUP_MS, measureMs: MEASURE_MS, root: ROOT, serverRoot: SERVER_ROOT, token: TOKEN,
      port, url, auth, corePid, ceilGet, ceilPost, cryptoOps, durable, target,
      load, must: (method, p, body) => must(port, method, p, body), request, spawnUntil, freePort, memKb, treeMemKb, findChildren, cpuUs,
      fmt: { int: fmtInt, ms: fmtMs, pct: fmtPct, mb: fmtMb },
      problem: (msg) => problems.push(`${section.title ?? name}: ${msg}`),
    };
    try {
      sectionOut.push('', `## ${section.title ?? name}`, '', ...(await section.run(ctx)));
    } catch (err) {
      problems.push(`section ${name} failed: ${err && err.stack ? err.stack : err}`);
    }
  }
  const transitAfter = memKb(transitPids[0]);

  // Report.
  const out = [];
  out.push(`# Strongroom bench — ${new Date().toISOString()}${QUICK ? ' (quick)' : ''}`);
  out.push('');
  if (SERVER_ROOT !== ROOT) out.push(`Server binary from ${SERVER_ROOT}.`, '');
  out.push(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}.`);
  if (!WRK) out.push('wrk is not installed (Debian package `wrk`): the wrk rows and their target are left out.', '');
  out.push(`Each phase: ${WARMUP_MS} ms warm-up, ${MEASURE_MS} ms measured, c=${CONC} keep-alive connections from a separate load.js process. Ratios are to the raw node:http ceiling of the same method measured in this run.`);
  out.push('');
  out.push('Server CPU µs/req: CPU time of the server process (the raw server for a ceiling, the core otherwise) over the whole phase, per request served; plugin CPU µs/req: the same for the plugin process serving a kv or transit phase.');
  out.push('');
  out.push('| scenario | c | req/s | items/s | p50 ms | p99 ms | % of ceiling | server CPU µs/req | plugin CPU µs/req | non-2xx | errors |');
  out.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const r = row.r;
    const items = row.items ? fmtInt(r.okRps * row.items) : '';
    out.push(`| ${row.name} | ${r.concurrency} | ${fmtInt(r.okRps)} | ${items} | ${fmtMs(r.p50Ms)} | ${fmtMs(r.p99Ms)} | ${fmtPct(r.okRps / row.ceiling.okRps)} | ${fmtInt(r.cpuUsPerReq)} | ${fmtInt(r.pluginCpuUsPerReq)} | ${r.non2xx} | ${r.errors} |`);
  }
  out.push(`| reference: LevelDB sealed put (256 B, AES-GCM), sync, 32 in flight, in the bench process | 32 | ${fmtInt(durable.okRps)} |  | ${fmtMs(durable.p50Ms)} | ${fmtMs(durable.p99Ms)} |  |  |  | ${durable.non2xx} | ${durable.errors} |`);
  out.push('');
  out.push('| crypto comparison | ops/s | % of in-process node:crypto loop | % of POST ceiling |');
  out.push('|---|---|---|---|');
  out.push(`| in-process AES-256-GCM encrypt 64 B (randomBytes(12) nonce, one loop, this process) | ${fmtInt(cryptoOps)} | 100 % | ${fmtPct(cryptoOps / ceilPost.okRps)} |`);
  for (const row of rows.filter((x) => x.crypto)) {
    const ops = row.r.okRps * (row.items ?? 1);
    out.push(`| ${row.name} | ${fmtInt(ops)} | ${fmtPct(ops / cryptoOps)} | ${fmtPct(ops / ceilPost.okRps)} |`);
  }
  out.push('');
  out.push('Memory: PSS (shared pages divided among the processes sharing them) and RSS, from /proc/PID/smaps_rollup; "core and its plugins" sums every descendant process of the core.');
  out.push('');
  out.push('| memory | PSS | RSS |');
  out.push('|---|---|---|');
  out.push(`| core, idle after start (pid ${corePid}) | ${fmtMb(coreIdle.pss)} | ${fmtMb(coreIdle.rss)} |`);
  out.push(`| kv plugin, idle after start (${kvPids.length ? `pid ${kvPids[0]}` : 'not found'}) | ${fmtMb(kvIdle.pss)} | ${fmtMb(kvIdle.rss)} |`);
  out.push(`| core and its plugins (${treeIdle.processes} processes), idle after start | ${fmtMb(treeIdle.pss)} | ${fmtMb(treeIdle.rss)} |`);
  out.push(`| core, after the load phases | ${fmtMb(coreAfter.pss)} | ${fmtMb(coreAfter.rss)} |`);
  out.push(`| transit plugin, after the load phases (${transitPids.length ? `pid ${transitPids[0]}` : 'not found'}) | ${fmtMb(transitAfter.pss)} | ${fmtMb(transitAfter.rss)} |`);
  out.push(`| core and its plugins (${treeAfter.processes} processes), after the load phases | ${fmtMb(treeAfter.pss)} | ${fmtMb(treeAfter.rss)} |`);
  out.push('');
  out.push(...sectionOut);
  out.push('');
  out.push('## Targets (issues 20 and 31), each against its reference in this run');
  out.push('');
  out.push('| target | measured | reference | ratio | goal | met |');
  out.push('|---|---|---|---|---|---|');
  for (const t of targets) {
    const ratio = t.value / t.reference;
    const fmt = (v) => (t.unit === 'ms' ? `${fmtMs(v)} ms` : `${fmtInt(v)} ${t.unit}`);
    const shown = t.atMost ? `${Number.isFinite(ratio) ? ratio.toFixed(2) : '–'} ×` : fmtPct(ratio);
    const goal = t.atMost ? `≤ ${t.goal} ×` : `≥ ${(t.goal * 100).toFixed(0)} %`;
    const met = Number.isFinite(ratio) && (t.atMost ? ratio <= t.goal : ratio >= t.goal);
    out.push(`| ${t.name} | ${fmt(t.value)} | ${fmt(t.reference)} | ${shown} | ${goal} | ${met ? 'yes' : '**no**'} |`);
  }
  out.push('');
  out.push(`Non-2xx counting checked: a forced-404 phase reported ${check.non2xx}/${check.total} responses as non-2xx.`);
  if (problems.length) {
    out.push('');
    out.push('**Phases with failures (their req/s counts only 2xx):**');
    for (const p of problems) out.push(`- ${p}`);
  }
  out.push('');
  out.push(`Total bench time ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  process.stdout.write(`${out.join('\n')}\n`);
  process.exitCode = problems.length ? 1 : 0;
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
}).finally(() => {
  cleanup();
  // Give SIGTERMed children a moment; then exit so a stuck child cannot hold the bench open.
  setTimeout(() => process.exit(), 500).unref();
});

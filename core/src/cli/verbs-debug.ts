/**
 * `monitor` (the server's log lines as they are written, sys/monitor) and
 * `debug` (Vault's `vault debug`: polls the server for a while and writes what
 * it saw, and the log lines of that time, into one .tar.gz).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './args.js';
import { CurlString } from './client.js';
import { commaList, ensureOk, flag, type Command, type Ctx } from './command.js';

const LOG_FLAGS = {
  'log-level': { kind: 'string' as const, help: 'trace, debug, info (default), warn or error: the lines shown, whatever the server logs at.' },
  'log-format': { kind: 'string' as const, help: 'standard (default) or json.' },
};

/** Streams sys/monitor, calling `onLine` per complete line, until the server ends it or `signal` aborts. */
async function follow(ctx: Ctx, query: Record<string, string>, onLine: (line: string) => void, signal?: AbortSignal): Promise<void> {
  let partial = '';
  const r = await ctx.client.stream(
    'sys/monitor',
    query,
    (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const l of lines) onLine(l);
    },
    signal,
  );
  ensureOk(r, 'starting the monitor');
  if (partial) onLine(partial);
}

const logQuery = (ctx: Ctx): Record<string, string> => ({ log_level: flag(ctx, 'log-level') ?? 'info', log_format: flag(ctx, 'log-format') ?? 'standard' });

/** Vault's debug targets this server has (no pprof, no replication, no config dump). */
const TARGETS = ['host', 'log', 'metrics', 'requests', 'server-status'] as const;
type Target = (typeof TARGETS)[number];

/** Vault's floor for both: shorter captures miss what they were meant to catch. */
const MIN_SECONDS = 5;

function seconds(ctx: Ctx, name: string, dflt: string): number {
  const { parseDuration } = require('@strongroom/sdk-plugin') as typeof import('@strongroom/sdk-plugin');
  let s: number;
  try {
    s = parseDuration(flag(ctx, name) ?? dflt);
  } catch {
    throw new UsageError(`-${name}: not a duration (e.g. 30s, 2m)`);
  }
  if (s < MIN_SECONDS) throw new UsageError(`-${name}: at least ${MIN_SECONDS}s`);
  return s;
}

const stamp = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');

export const debugVerbs: Record<string, Command> = {
  monitor: {
    usage: '[options]',
    synopsis: 'Print the server\'s log lines as they are written (sys/monitor, sudo), until interrupted.',
    flags: LOG_FLAGS,
    output: false,
    max: 0,
    async run(ctx) {
      await follow(ctx, logQuery(ctx), ctx.out);
    },
  },
  debug: {
    usage: '[options]',
    synopsis: 'Capture the server\'s state for a while (metrics, host, in-flight requests, status, log) into one .tar.gz.',
    help: [
      'Every -interval for -duration it polls sys/metrics, sys/host-info, sys/in-flight-req,',
      'sys/seal-status and sys/health, and keeps the log lines of the whole capture',
      '(sys/monitor at -log-level). Each target is one JSON file holding an array of polls;',
      'index.json lists the run and every error met (a token without sudo gets errors, not',
      'an abort). Targets: host, log, metrics, requests, server-status (default: all).',
    ].join('\n'),
    flags: {
      duration: { kind: 'string', help: 'How long to capture (default 2m, at least 5s).' },
      interval: { kind: 'string', help: 'Time between polls (default 30s, at least 5s, at most -duration).' },
      output: { kind: 'string', help: 'The archive to write (default strongroom-debug-<time>.tar.gz here); .tar.gz is added when missing.' },
      target: { kind: 'list', help: 'A target to capture (comma-separated or repeated); default all.', aliases: ['targets'] },
      'log-level': LOG_FLAGS['log-level'],
    },
    output: false,
    max: 0,
    async run(ctx) {
      const duration = seconds(ctx, 'duration', '2m');
      const interval = Math.min(seconds(ctx, 'interval', '30s'), duration);
      const asked = commaList(ctx, 'target');
      const bad = asked.filter((t) => !(TARGETS as readonly string[]).includes(t));
      if (bad.length) throw new UsageError(`-target: unknown ${bad.join(', ')} (one of ${TARGETS.join(', ')})`);
      const targets = new Set<Target>(asked.length ? (asked as Target[]) : TARGETS);
      const started = new Date();
      const name = `strongroom-debug-${stamp(started)}`;
      let output = resolve(flag(ctx, 'output') ?? `${name}.tar.gz`);
      if (!/\.(tar\.gz|tgz)$/.test(output)) output += '.tar.gz';
      mkdirSync(dirname(output), { recursive: true });

      const errors: Array<{ timestamp: string; target: string; error: string }> = [];
      const polls: Record<Exclude<Target, 'log'>, unknown[]> = { host: [], metrics: [], requests: [], 'server-status': [] };
      const get = async (target: string, path: string, query?: Record<string, string>): Promise<unknown> => {
        try {
          const r = await ctx.client.read(path, query);
          // sys/health answers its state in the status code (429, 473, 501, 503) with a body.
          if (r.status >= 400 && !(path === 'sys/health' && r.body && !r.body.errors)) {
            errors.push({ timestamp: new Date().toISOString(), target, error: `${path}: ${r.status} ${(r.body?.errors ?? []).join('; ') || r.text}` });
            return null;
          }
          return path === 'sys/in-flight-req' ? r.body : (r.body?.data ?? r.body);
        } catch (e) {
          // -output-curl-string: the first request is printed, nothing is captured.
          if (e instanceof CurlString) throw e;
          errors.push({ timestamp: new Date().toISOString(), target, error: `${path}: ${e instanceof Error ? e.message : String(e)}` });
          return null;
        }
      };
      const poll = async () => {
        const timestamp = new Date().toISOString();
        const jobs: Array<Promise<void>> = [];
        if (targets.has('host')) jobs.push(get('host', 'sys/host-info').then((v) => void (v && polls.host.push(v))));
        if (targets.has('metrics')) jobs.push(get('metrics', 'sys/metrics').then((v) => void (v && polls.metrics.push({ timestamp, ...(v as object) }))));
        if (targets.has('requests')) jobs.push(get('requests', 'sys/in-flight-req').then((v) => void (v && polls.requests.push({ timestamp, in_flight_requests: v }))));
        if (targets.has('server-status')) {
          jobs.push(
            Promise.all([get('server-status', 'sys/health'), get('server-status', 'sys/seal-status')]).then(([health, seal]) => void polls['server-status'].push({ timestamp, health, seal })),
          );
        }
        await Promise.all(jobs);
      };

      const log: string[] = [];
      const stopLog = new AbortController();
      const logging = targets.has('log')
        ? follow(ctx, { log_level: flag(ctx, 'log-level') ?? 'debug', log_format: 'standard' }, (l) => void log.push(l), stopLog.signal).catch((e: unknown) => {
            errors.push({ timestamp: new Date().toISOString(), target: 'log', error: `sys/monitor: ${e instanceof Error ? e.message : String(e)}` });
          })
        : Promise.resolve();
      ctx.err(`==> Capturing ${[...targets].sort().join(', ')} every ${interval}s for ${duration}s into ${output}`);
      const end = started.getTime() + duration * 1000;
      const until = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
      // A poll at the start and at each interval within the duration (6s every 5s: two), then the log to the end.
      for (let at = started.getTime(); at <= end; at += interval * 1000) {
        await until(at);
        await poll();
      }
      await until(end);
      stopLog.abort();
      await logging;

      const dir = mkdtempSync(join(tmpdir(), 'strongroom-debug-'));
      try {
        const root = join(dir, name);
        mkdirSync(root);
        const files: string[] = [];
        const put = (file: string, content: string) => {
          writeFileSync(join(root, file), content, { mode: 0o600 });
          files.push(file);
        };
        if (targets.has('host')) put('host_info.json', JSON.stringify(polls.host, null, 2));
        if (targets.has('metrics')) put('metrics.json', JSON.stringify(polls.metrics, null, 2));
        if (targets.has('requests')) put('requests.json', JSON.stringify(polls.requests, null, 2));
        if (targets.has('server-status')) put('server_status.json', JSON.stringify(polls['server-status'], null, 2));
        if (targets.has('log')) put('strongroom.log', log.length ? `${log.join('\n')}\n` : '');
        const index = {
          version: 1,
          strongroom_address: ctx.client.address,
          timestamp: started.toISOString(),
          duration_seconds: duration,
          interval_seconds: interval,
          targets: [...targets].sort(),
          files: [...files, 'index.json'].sort(),
          errors,
        };
        put('index.json', JSON.stringify(index, null, 2));
        const tar = require('tar') as typeof import('tar');
        await tar.c({ gzip: true, file: output, cwd: dir }, [name]);
        chmodSync(output, 0o600);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      ctx.out(`Success! Debug archive written to: ${output}`);
      // As Vault: what could not be captured is in the index, not a failure of the command.
      if (errors.length) ctx.err(`${errors.length} error(s) met during the capture: see index.json in ${basename(output)}`);
    },
  },
};

/**
 * `strongroom server`: `--dev` starts an initialized, unsealed development
 * server (one unseal key, root token printed, kv v2 at secret/); `--config`
 * starts a production server, sealed and possibly uninitialized.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_TELEMETRY, loadServerConfig, type ServerConfig } from '../server/server-config.js';
import { createCore } from '../server/core.js';
import { createLogger, type LogLevel } from '../log/logger.js';
import { SealKeyError } from '../seal/static-seal.js';
import type { ParsedArgs } from './args.js';

const DEV_KEY_FILE = 'dev-unseal-key';

/** @public Loaded lazily by cli/main.ts with require(), which knip does not follow. */
export async function runServer(args: ParsedArgs): Promise<void> {
  const f = args.flags;
  const dev = f.get('dev') === 'true' || f.has('dev-root-token-id') || f.has('dev-listen-address');
  let config: ServerConfig;
  let devDataDir = '';
  if (dev) {
    devDataDir = f.get('dev-data-dir') ?? mkdtempSync(join(tmpdir(), 'strongroom-dev-'));
    config = {
      listeners: [{ address: f.get('dev-listen-address') ?? '127.0.0.1:8200', tls: null, maxRequestSize: 32 * 1024 * 1024, requireRequestHeader: false }],
      storage: { type: 'level', config: { path: join(devDataDir, 'data') } },
      pluginDirectory: f.get('dev-plugin-dir') ?? null,
      logLevel: (f.get('log-level') as LogLevel | undefined) ?? 'info',
      defaultLeaseTtl: 32 * 24 * 3600,
      maxLeaseTtl: 32 * 24 * 3600,
      clusterName: 'strongroom-dev',
      apiAddr: '',
      leaseRevocation: {},
      telemetry: { ...DEFAULT_TELEMETRY },
      ui: true,
      ...(process.env.STRONGROOM_DEV_PLUGIN_CPU_PROFILE ? { pluginCpuProfileDir: resolve(process.env.STRONGROOM_DEV_PLUGIN_CPU_PROFILE) } : {}),
    };
  } else {
    const file = f.get('config');
    if (!file) throw new Error('server: either -dev or -config=FILE is required');
    config = await loadServerConfig(file);
    if (f.has('log-level')) config.logLevel = f.get('log-level') as LogLevel;
  }
  if (f.has('log-level') && !['trace', 'debug', 'info', 'warn', 'error'].includes(config.logLevel)) throw new Error(`-log-level: must be one of trace, debug, info, warn, error`);
  const format = f.get('log-format') ?? config.logFormat ?? 'json';
  if (format !== 'standard' && format !== 'json') throw new Error('-log-format: must be "standard" or "json"');

  const logger = createLogger({ level: config.logLevel, format, ...(config.logFile ? { file: config.logFile } : {}) });
  const core = await createCore({ config, logger });
  const addresses = await core.listen();

  let shuttingDown = false;
  const stop = (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info('shutting down', { signal });
    core.shutdown().then(
      () => {
        logger.info('shutdown complete');
        // Let the log transports (a log_file) flush before the process ends.
        setTimeout(() => process.exit(0), 50);
      },
      (err: unknown) => {
        logger.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  if (!dev) {
    logger.info('strongroom server started', { listeners: addresses, storage: config.storage.type, ...(config.seal ? { seal: 'static' } : {}) });
    // Every start: a static seal unseals here, and storage sealed by a static seal without its stanza stops the server.
    for (;;) {
      try {
        await core.autoUnseal();
        return;
      } catch (err) {
        if (err instanceof SealKeyError) {
          // A wrong or missing seal key stops the server: the message names the stanza (never the key).
          shuttingDown = true;
          await core.shutdown().catch(() => undefined);
          throw err;
        }
        if (shuttingDown) return;
        // Storage not reachable yet: try again, as an operator's unseal would.
        logger.warn(config.seal ? 'auto-unseal failed; retrying in 5 s' : 'reading the stored seal failed; retrying in 5 s', { error: err instanceof Error ? err.message : String(err) });
        await new Promise((r) => setTimeout(r, 5000));
      }
    }
  }

  // Dev mode: initialize on first start; with a kept --dev-data-dir, unseal with the saved dev key.
  const keyFile = join(devDataDir, DEV_KEY_FILE);
  let unsealKey: string;
  let rootToken: string;
  if (existsSync(keyFile)) {
    const saved = JSON.parse(readFileSync(keyFile, 'utf8')) as { unsealKey: string; rootToken: string };
    await core.unsealWithKey(saved.unsealKey);
    unsealKey = saved.unsealKey;
    rootToken = saved.rootToken;
  } else {
    const init = await core.devInit({ rootTokenId: f.get('dev-root-token-id') });
    unsealKey = init.unsealKey;
    rootToken = init.rootToken;
    // Dev only: the key sits beside the data so a kept dev data dir can restart. Never in production.
    writeFileSync(keyFile, JSON.stringify({ unsealKey, rootToken }), { mode: 0o600 });
  }
  const addr = addresses[0]!;
  process.stdout.write(
    [
      '==> Strongroom server started in development mode. Do not use it in production.',
      '',
      `    Api Address: ${addr.url}`,
      `    Storage: level (${config.storage.type === 'level' ? config.storage.config.path : ''})`,
      '',
      'You may need to set the following environment variables:',
      '',
      `    $ export STRONGROOM_ADDR='${addr.url}'`,
      '',
      'The unseal key and root token are displayed below in case you want to',
      'seal/unseal the server or re-authenticate.',
      '',
      `Unseal Key: ${unsealKey}`,
      `Root Token: ${rootToken}`,
      '',
      'Development mode should NOT be used in production installations!',
      '',
    ].join('\n'),
  );
}

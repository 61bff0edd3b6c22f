'use strict';
/*
 * A fresh dev server of a section's own (not the one the load phases warmed), from the binary
 * under test (`--server-root`, so an A/B run measures the other checkout), in a temp data dir
 * removed when it stops. Used by the memory sections: their baseline is a process nothing else touched.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/**
 * The environment the installed `strongroom` command gives the core (core/bin/strongroom.js's
 * shebang), so the bench measures what operators run.
 */
const SERVER_ENV = { ...process.env, MALLOC_MMAP_THRESHOLD_: '131072' };

/** Starts it (root token `ctx.token`) and resolves once it printed its root token; `nodeArgs` go to node before the script. */
async function startDevServer(ctx, { nodeArgs = [] } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strongroom-bench-dev-'));
  const port = await ctx.freePort();
  const main = path.join(ctx.serverRoot, 'core', 'dist', 'cli', 'main.js');
  const srv = await ctx.spawnUntil(
    process.execPath,
    [...nodeArgs, main, 'server', '-dev', `-dev-listen-address=127.0.0.1:${port}`, `-dev-root-token-id=${ctx.token}`, `-dev-data-dir=${dataDir}`, '-log-level=error'],
    { cwd: ctx.serverRoot, env: SERVER_ENV },
    /Root Token:/,
    30_000,
  );
  return {
    port,
    pid: srv.child.pid,
    async stop() {
      srv.child.kill('SIGTERM');
      await new Promise((r) => (srv.child.exitCode !== null || srv.child.signalCode !== null ? r() : srv.child.once('exit', r)));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

module.exports = { startDevServer, SERVER_ENV };

/**
 * The test-only lease plugin (test/fixtures/lease-plugin) registered from a
 * plugin directory and mounted, on a production-config server (level
 * storage, init + unseal) so that tests can SIGKILL and restart it.
 */
import { resolve } from 'node:path';
import { externalPlugin } from './plugins';
import { restartConfigServer, scratchDir, startConfigServer, type RunningServer } from './server';

export const LEASE_PLUGIN_MAIN = resolve(__dirname, '../fixtures/lease-plugin/dist/main.js');

export type LeaseServer = RunningServer & { configFile: string; unsealKeys: string[] };

/** A plugin directory holding the lease plugin as an external plugin of its own (lease-test/), with its entry and sha256. */
export function leasePluginDir(): { dir: string; command: string; sha256: string } {
  const dir = scratchDir('sr-lease-plugins-');
  const { command, sha256 } = externalPlugin(dir, 'lease-test', LEASE_PLUGIN_MAIN);
  return { dir, command, sha256 };
}

/**
 * Starts, initialises and unseals a server whose config adds `extraConfig`,
 * registers the lease plugin as secret/lease-test and mounts it at `mount`.
 */
export async function startLeaseServer(opts: { extraConfig?: string; mount?: string } = {}): Promise<LeaseServer> {
  const plugins = leasePluginDir();
  const config = `storage "level" { path = "$DIR/data" }
listener "tcp" {
  address     = "127.0.0.1:$PORT"
  tls_disable = true
}
plugin_directory = "${plugins.dir}"
${opts.extraConfig ?? ''}
`;
  const s = await startConfigServer(config);
  const init = await s.api('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, { token: null });
  if (init.status !== 200) throw new Error(`init failed: ${init.text}`);
  // api() reads rootToken from the object launch() made: set it there, not on a copy.
  s.rootToken = init.body.root_token;
  const server: LeaseServer = Object.assign(s, { unsealKeys: init.body.keys_base64 as string[] });
  await unseal(server);
  const reg = await server.api('POST', 'sys/plugins/catalog/secret/lease-test', { command: plugins.command, sha256: plugins.sha256, version: 'v1.0.0' });
  if (reg.status !== 204) throw new Error(`registering the lease plugin failed: ${reg.text}`);
  const m = await server.api('POST', `sys/mounts/${opts.mount ?? 'lt'}`, { type: 'lease-test' });
  if (m.status !== 204) throw new Error(`mounting the lease plugin failed: ${m.text}`);
  return server;
}

async function unseal(s: LeaseServer): Promise<void> {
  let last: { status: number; body: any } | undefined;
  for (const key of s.unsealKeys) last = await s.api('POST', 'sys/unseal', { key }, { token: null });
  if (!last || last.body?.sealed !== false) throw new Error(`unseal failed: ${JSON.stringify(last?.body)}`);
}

/** Restart after the previous process exited (SIGKILL or not) and unseal again. */
export async function restartLeaseServer(prev: LeaseServer): Promise<LeaseServer> {
  const s = await restartConfigServer(prev);
  s.rootToken = prev.rootToken;
  const next: LeaseServer = Object.assign(s, { unsealKeys: prev.unsealKeys });
  await unseal(next);
  return next;
}

export interface Revocation {
  count: number;
  at: number[];
  attempts: number;
}

/** What the plugin recorded: revocations and renewals per username. */
export async function records(s: RunningServer, mount = 'lt'): Promise<{ revoked: Record<string, Revocation>; renewed: Record<string, { count: number }> }> {
  const r = await s.api('GET', `${mount}/records`);
  if (r.status !== 200) throw new Error(`reading the plugin records failed: ${r.status} ${r.text}`);
  return r.body.data;
}


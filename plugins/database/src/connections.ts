/**
 * One database-plugin client per connection of this mount. The core resolves
 * a connection's (plugin_name, plugin_version) (SystemView.openDatabasePlugin):
 * the built-in runs in this process, any other version in a process the core
 * starts (plugin-clients.ts); the connection lives in it under the id
 * `<mount uuid>/<connection name>`.
 *
 * Recovery, each at most once per call:
 *  - `connection_not_initialized` (the plugin process restarted): Initialize
 *    again with the stored config, then retry;
 *  - the plugin is gone or unreachable: ask the core for it again (it waits
 *    for a process's restart and hands out the new secret), Initialize, retry.
 * Configuration errors never carry the connection's password: the plugin
 * scrubs its errors, and nothing here logs a config.
 */
import { badRequest, type Logger, StrongroomError, type SystemView } from '@strongroom/sdk-plugin';
import * as database from '@strongroom/sdk-plugin/database';
import type { ConnectionConfig, DatabaseStore } from './store.js';

export type DatabaseClientFactory = (
  address: database.DatabasePluginAddress,
  connectionId: string,
  /** `plugin`: the catalog name (plugin_name); `label` names it and its version in errors. */
  opts: { plugin: string; label: string },
) => database.DatabasePluginClient | Promise<database.DatabasePluginClient>;

interface Live {
  client: database.DatabasePluginClient;
  address: database.DatabasePluginAddress;
  /** The plugin the instance lives in; a config naming another one moves the connection. */
  plugin: string;
}

export interface Connections {
  /** Runs `fn` with the connection's client, recovering once from a restarted or replaced plugin process. */
  use<T>(name: string, fn: (client: database.DatabasePluginClient, cfg: Readonly<ConnectionConfig>) => Promise<T>): Promise<T>;
  /** Initializes `cfg` in its plugin (verifying it when asked) and returns the details to persist. */
  configure(cfg: ConnectionConfig, verify: boolean): Promise<Record<string, unknown>>;
  /** Closes the connection's instance in its plugin (best effort); the next use opens it again. */
  close(name: string): Promise<void>;
  closeAll(): Promise<void>;
  /** Which plugin version serves a connection now ("" when not open). */
  servingVersion(name: string): string;
}

const pluginKey = (cfg: Pick<ConnectionConfig, 'plugin_name' | 'plugin_version'>) => `${cfg.plugin_name}@${cfg.plugin_version}`;

/** The plugin behind the client is gone, replaced or unreachable: worth asking the core for it again. */
const processGone = (err: unknown) => err instanceof StrongroomError && (err.code === 'unavailable' || err.code === 'plugin_failed');

export function createConnections(deps: {
  mountUuid: string;
  system: SystemView;
  store: Pick<DatabaseStore, 'configs'>;
  logger: Logger;
  clientFactory: DatabaseClientFactory;
  /** Resolves once the connection may be used (a root rotation a crash cut short is settled first: root-rotation.ts). */
  ready: (name: string) => Promise<void>;
}): Connections {
  const live = new Map<string, Live>();
  const opening = new Map<string, Promise<Live>>();

  const connect = async (cfg: ConnectionConfig): Promise<Live> => {
    if (!deps.system.openDatabasePlugin) throw new StrongroomError('internal', 'this core cannot open database plugins');
    const address = await deps.system.openDatabasePlugin(cfg.plugin_name, cfg.plugin_version);
    const client = await deps.clientFactory(address, `${deps.mountUuid}/${cfg.name}`, { plugin: cfg.plugin_name, label: `${cfg.plugin_name} ${address.version}` });
    return { client, address, plugin: pluginKey(cfg) };
  };

  /** Opens and initializes a connection once, however many calls wait for it. */
  const open = (cfg: ConnectionConfig): Promise<Live> => {
    const pending = opening.get(cfg.name);
    if (pending) return pending;
    const p = (async () => {
      const l = await connect(cfg);
      await l.client.initialize({ config: cfg.connection_details, verifyConnection: false });
      live.set(cfg.name, l);
      return l;
    })().finally(() => opening.delete(cfg.name));
    opening.set(cfg.name, p);
    return p;
  };

  const closeLive = async (name: string, l: Live | undefined) => {
    if (!l) return;
    if (live.get(name) === l) live.delete(name);
    await l.client.close().catch((err: unknown) => deps.logger.debug('closing a database connection failed', { connection: name, error: String(err) }));
  };

  const api: Connections = {
    async use(name, fn) {
      await deps.ready(name);
      const cfg = await deps.store.configs.view(name);
      if (!cfg) throw badRequest(`db_name: connection "${name}" does not exist`);
      let l = live.get(name);
      if (l && l.plugin !== pluginKey(cfg)) {
        // Written elsewhere with another plugin or version: move the connection.
        await closeLive(name, l);
        l = undefined;
      }
      l ??= await open(cfg);
      try {
        return await fn(l.client, cfg);
      } catch (err) {
        if (database.isConnectionNotInitialized(err)) {
          await l.client.initialize({ config: cfg.connection_details, verifyConnection: false });
          return fn(l.client, cfg);
        }
        if (processGone(err)) {
          deps.logger.warn('database plugin unreachable; reconnecting', { connection: name, error: (err as Error).message });
          if (live.get(name) === l) live.delete(name);
          const fresh = await open(cfg);
          return fn(fresh.client, cfg);
        }
        throw err;
      }
    },

    async configure(cfg, verify) {
      const previous = live.get(cfg.name);
      const l = await connect(cfg);
      const res = await l.client.initialize({ config: cfg.connection_details, verifyConnection: verify });
      if (previous && previous.plugin !== l.plugin) await closeLive(cfg.name, previous);
      live.set(cfg.name, l);
      return res.config;
    },

    async close(name) {
      await opening.get(name)?.catch(() => undefined);
      await closeLive(name, live.get(name));
    },

    async closeAll() {
      await Promise.all([...live.entries()].map(([name, l]) => closeLive(name, l)));
    },

    servingVersion: (name) => live.get(name)?.address.version ?? '',
  };
  return api;
}

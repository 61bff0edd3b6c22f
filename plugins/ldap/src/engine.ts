/**
 * What the paths of one mount share: storage, the directory connection, the
 * per-mount lock, the clock, password generation and the root-password
 * settlement that must run before the bind password is first used.
 *
 * Passwords come from the configured password policy (asked of the core), or
 * else from the default: `length` (64 unless set) letters and digits with at
 * least one upper, one lower and one digit. They are never logged and never
 * put into an error message.
 */
import { badRequest } from '@strongroom/sdk-plugin';
import { generatePassword, passwordPolicy, type KeyedMutex, type Logger, type PasswordPolicy, type SystemView } from '@strongroom/sdk-plugin/host';
import { bindName, canBind, createDirectory, type Directory } from './directory.js';
import type { LdapConfig, LdapStore } from './store.js';

export const DEFAULT_PASSWORD_LENGTH = 64;

export interface Engine {
  store: LdapStore;
  directory: Directory;
  system: SystemView;
  logger: Logger;
  /** Keys (the mount's uuid is added): `config` (config writes, rotate-root), `static/<name>`, `set/<name>`. */
  mutex: KeyedMutex;
  now: () => number;
  /** The configuration in force, a root rotation cut short settled first; 400 when none is written. */
  config(): Promise<LdapConfig>;
  /** Settles a root rotation cut short by a crash (new password if it binds, else the stored one); runs under the `config` lock. */
  settleRoot(): Promise<void>;
  newPassword(cfg?: LdapConfig): Promise<string>;
}

const policies = new Map<number, PasswordPolicy>();
function defaultPolicy(length: number): PasswordPolicy {
  let p = policies.get(length);
  if (!p) {
    p = passwordPolicy({
      length,
      rules: [
        { charset: 'abcdefghijklmnopqrstuvwxyz', minChars: 1 },
        { charset: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', minChars: 1 },
        { charset: '0123456789', minChars: 1 },
      ],
    });
    policies.set(length, p);
  }
  return p;
}

export function createEngine(deps: Pick<Engine, 'store' | 'system' | 'logger' | 'mutex' | 'now'>): Engine {
  const { store } = deps;
  let settled = false;

  const settleRoot = async () => {
    const wal = await store.rootWal.get();
    const cfg = await store.config.get();
    if (!wal || !cfg) {
      if (wal) await store.rootWal.delete();
      settled = true;
      return;
    }
    const dn = bindName(cfg);
    if (await canBind(cfg, dn, wal.password)) {
      await store.config.put({ ...cfg, bindpass: wal.password, last_bind_password_rotation: wal.started });
      await store.rootWal.delete();
      deps.logger.info('settled a bind password rotation cut short: the new password is in force');
    } else if (await canBind(cfg, dn, cfg.bindpass)) {
      await store.rootWal.delete();
      deps.logger.info('settled a bind password rotation cut short: the directory kept the previous password');
    } else {
      throw badRequest('the bind password rotation cut short cannot be settled: neither the new nor the previous password binds');
    }
    settled = true;
  };

  const engine: Engine = {
    ...deps,
    directory: createDirectory(() => engine.config()),
    async config() {
      if (!settled) await deps.mutex.run('config', () => (settled ? Promise.resolve() : settleRoot()));
      const cfg = await store.config.get();
      if (!cfg) throw badRequest('the directory is not configured (write config first)');
      return cfg;
    },
    settleRoot,
    async newPassword(given) {
      const cfg = given ?? (await engine.config());
      if (cfg.password_policy) return deps.system.generatePasswordFromPolicy(cfg.password_policy);
      return generatePassword(defaultPolicy(cfg.length || DEFAULT_PASSWORD_LENGTH));
    },
  };
  return engine;
}

/**
 * What the paths of one mount share: storage, the directory connection, the
 * per-mount lock, the clock, password generation, and the rotations
 * (rotation.ts), whose bind-password settlement runs before the bind
 * password is first used in this process.
 *
 * Passwords come from the configured password policy (asked of the core), or
 * else from the default: `length` (64 unless set) letters and digits with at
 * least one upper, one lower and one digit. They are never logged and never
 * put into an error message.
 */
import { badRequest, generatePassword, passwordPolicy, type PasswordPolicy } from '@strongroom/sdk-plugin';
import { createDirectory } from './directory.js';
import { ROOT, createRotations, type EngineBase, type Rotations } from './rotation.js';
import type { LdapConfig } from './store.js';

export const DEFAULT_PASSWORD_LENGTH = 64;

export interface Engine extends EngineBase {
  rotations: Rotations;
  /** The configuration in force (the cached record, shared: never modified), a bind-password rotation cut short settled first; 400 when none is written. */
  config(): Promise<Readonly<LdapConfig>>;
  /** Marks the bind password settled in this process (rotate-root and config writes settle under the `config` lock). */
  markSettled(): void;
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

  const engine: Engine = {
    ...deps,
    directory: createDirectory(() => engine.config()),
    rotations: undefined as unknown as Rotations,
    async config() {
      if (!settled) {
        const outcome = await engine.rotations.root.settle(ROOT).catch((err: unknown) => {
          throw badRequest(`the bind password rotation cut short cannot be settled: ${err instanceof Error ? err.message : String(err)}`);
        });
        if (outcome !== 'none') deps.logger.info('settled a bind password rotation cut short', { outcome });
        settled = true;
      }
      const cfg = await store.config.view();
      if (!cfg) throw badRequest('the directory is not configured (write config first)');
      return cfg;
    },
    markSettled: () => void (settled = true),
    async newPassword(given) {
      const cfg = given ?? (await engine.config());
      if (cfg.password_policy) return deps.system.generatePasswordFromPolicy(cfg.password_policy);
      return generatePassword(defaultPolicy(cfg.length || DEFAULT_PASSWORD_LENGTH));
    },
  };
  engine.rotations = createRotations(engine);
  return engine;
}

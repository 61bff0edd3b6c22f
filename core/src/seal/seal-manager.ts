/**
 * The Shamir seal: `sys/init`, `sys/unseal`, `sys/seal`, `sys/seal-status`.
 *
 * Security invariants:
 * - the unseal key exists in memory only while it is used: shares are returned
 *   once by init and never stored; submitted parts are kept until the
 *   threshold is reached (or a reset), then overwritten with zeros;
 * - duplicate parts are detected with constant-time comparison and ignored;
 * - a combined key that does not open the barrier resets progress, so a bad
 *   share cannot be "fixed" by guessing further shares on top of it;
 * - `core/seal-config` (share count and threshold) is stored in plain text:
 *   it is not secret and must be readable while sealed.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { StrongroomError, badRequest, isStdBase64 } from '@strongroom/sdk-plugin/host';
import type { Physical } from '../storage/physical.js';
import { KEY_BYTES, SEAL_CONFIG_PATH, type Barrier } from '../barrier/barrier.js';
import { ShamirError, combine, split } from '../barrier/shamir.js';

/** Behind the barrier: the cluster's name and id, shown once unsealed. */
const CLUSTER_INFO_PATH = 'core/cluster/local/info';

export interface SealStatus {
  type: 'shamir';
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  nonce: string;
  version: string;
  build_date: string;
  migration: false;
  cluster_name?: string;
  cluster_id?: string;
  recovery_seal: false;
  storage_type: string;
}

export interface InitResult {
  /** The unseal key shares, hex; with one share, the unseal key itself (as Vault does). */
  keys: string[];
  keys_base64: string[];
}

/** New unseal key shares made by a rekey and not yet in force (SealManager.prepareRekey). */
export interface PendingRekey extends InitResult {
  secret_shares: number;
  secret_threshold: number;
  /** Whether these shares (the threshold of them) combine to the new key; constant time; never throws on a wrong set. */
  matches(parts: readonly Buffer[]): boolean;
  /** Puts the new key in force; the old shares stop working. Once only. */
  commit(): Promise<void>;
  discard(): void;
}

export type SealHook = () => void | Promise<void>;

export interface SealManager {
  status(): Promise<SealStatus>;
  initialized(): Promise<boolean>;
  /** Validates `{ secret_shares, secret_threshold }` (400 naming the field), initializes, runs onInit hooks while briefly unsealed, and leaves the server sealed. */
  init(request: unknown): Promise<InitResult>;
  /** Dev server: one share, threshold 1, left unsealed (onInit then onUnseal hooks run). */
  initDev(): Promise<InitResult>;
  /** One unseal part, hex or base64. Unseals at the threshold (running onUnseal hooks). */
  submitUnsealKey(key: string | undefined, opts?: { reset?: boolean; migrate?: boolean }): Promise<SealStatus>;
  /** Shares and threshold of the current unseal key; null before init. */
  sealConfig(): Promise<{ secret_shares: number; secret_threshold: number } | null>;
  /** Whether these parts (threshold many) combine to the current unseal key. Never throws on a wrong key. */
  verifyParts(parts: readonly Buffer[]): Promise<boolean>;
  /**
   * Rekey, first step: a new unseal key split as `cfg` says, not yet in force.
   * `commit()` makes it replace the old one (the server stays unsealed);
   * `matches()` says whether shares of it combine to it (rekey verification);
   * `discard()` forgets it.
   */
  prepareRekey(cfg: { secret_shares: number; secret_threshold: number }): PendingRekey;
  /** Runs onSeal hooks (while storage is still readable), then wipes every key. */
  seal(): Promise<void>;
  /** Storage was replaced under the seal (a snapshot restore): what it read from it is read again. */
  storageReplaced(): void;
  /** Hooks run in registration order; each returns its unsubscribe function. */
  onInit(cb: SealHook): () => void;
  onUnseal(cb: SealHook): () => void;
  onSeal(cb: SealHook): () => void;
}

export interface SealManagerDeps {
  physical: Pick<Physical, 'get'>;
  barrier: Pick<Barrier, 'initialized' | 'initialize' | 'unseal' | 'seal' | 'sealed' | 'get' | 'put' | 'verifyUnsealKey' | 'rekey'>;
  clusterName?: string;
  storageType?: string;
  version?: string;
  buildDate?: string;
  log?: { error(message: string, meta?: Record<string, unknown>): void; info(message: string, meta?: Record<string, unknown>): void };
}

interface SealConfig {
  type: 'shamir';
  secret_shares: number;
  secret_threshold: number;
}

// CLIs send numbers as strings; accept both (STYLE.md: wire-lenient).
const count = (field: string) =>
  z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)], {
      error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be an integer`),
    })
    .refine(Number.isInteger, { error: `${field} must be an integer` });

const initSchema = z.object({
  secret_shares: count('secret_shares'),
  secret_threshold: count('secret_threshold'),
  pgp_keys: z.array(z.string()).optional(),
  root_token_pgp_key: z.string().optional(),
});

/** `{ secret_shares, secret_threshold }` of init and rekey: a 400 naming the field when invalid. */
export function parseSealConfig(request: unknown): { secret_shares: number; secret_threshold: number } {
  return parseInit(request);
}

/** JSON null means "not set" (hvac sends null for every parameter it was not given). */
function withoutNulls(request: unknown): unknown {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) return request ?? {};
  return Object.fromEntries(Object.entries(request).filter(([, v]) => v !== null));
}

function parseInit(request: unknown): SealConfig {
  const r = initSchema.safeParse(withoutNulls(request));
  if (!r.success) {
    const details = r.error.issues.map((i) => (i.code === 'invalid_union' || i.code === 'custom' ? i.message : `${i.path.join('.')}: ${i.message}`));
    throw badRequest(details[0] ?? 'invalid request', details);
  }
  const { secret_shares: n, secret_threshold: t, pgp_keys, root_token_pgp_key } = r.data;
  const problems: string[] = [];
  if (pgp_keys && pgp_keys.length > 0) problems.push('pgp_keys is not supported');
  if (root_token_pgp_key) problems.push('root_token_pgp_key is not supported');
  if (n < 1) problems.push('secret_shares must be at least 1');
  if (n > 255) problems.push('secret_shares must be at most 255');
  if (t < 1) problems.push('secret_threshold must be at least 1');
  if (t > n && n >= 1) problems.push('secret_threshold must be less than or equal to secret_shares');
  if (n > 1 && t === 1) problems.push('secret_threshold must be greater than 1 when secret_shares is greater than 1');
  if (problems.length > 0) throw badRequest(problems[0] as string, problems);
  return { type: 'shamir', secret_shares: n, secret_threshold: t };
}


/** One key share as an operator types it: hex or standard base64. */
export function decodePart(key: string): Buffer {
  // Buffer's hex decoder stops at the first non-hex pair: full length means all hex (no regex, any size).
  if (key.length > 0 && key.length % 2 === 0) {
    const hex = Buffer.from(key, 'hex');
    if (hex.length * 2 === key.length) return hex;
    hex.fill(0);
  }
  if (key.length > 0 && isStdBase64(key)) return Buffer.from(key, 'base64');
  throw badRequest("'key' must be a valid hex or base64 string");
}

export function createSealManager(deps: SealManagerDeps): SealManager {
  const { physical, barrier } = deps;
  const storageType = deps.storageType ?? 'level';
  const version = deps.version ?? '0.1.0';
  const buildDate = deps.buildDate ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const hooks = { init: [] as SealHook[], unseal: [] as SealHook[], seal: [] as SealHook[] };

  let config: SealConfig | null = null;
  let knownInitialized = false;
  let parts: Buffer[] = [];
  let nonce = '';
  let cluster: { name: string; id: string } | null = null;
  // Init, unseal and seal run one at a time: two parts arriving together must
  // not both reach the threshold, and a seal must not interleave an unseal.
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const subscribe = (list: SealHook[], cb: SealHook) => {
    list.push(cb);
    return () => {
      const i = list.indexOf(cb);
      if (i !== -1) list.splice(i, 1);
    };
  };

  const runHooks = async (list: SealHook[]) => {
    for (const cb of [...list]) await cb();
  };

  const resetProgress = () => {
    for (const p of parts) p.fill(0);
    parts = [];
    nonce = '';
  };

  const loadConfig = async (): Promise<SealConfig | null> => {
    if (config) return config;
    const raw = await physical.get(SEAL_CONFIG_PATH);
    if (raw === null) return null;
    const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as SealConfig;
    config = parsed;
    return parsed;
  };

  const initialized = async (): Promise<boolean> => {
    if (knownInitialized) return true;
    knownInitialized = (await loadConfig()) !== null && (await barrier.initialized());
    return knownInitialized;
  };

  const loadCluster = async () => {
    const raw = await barrier.get(CLUSTER_INFO_PATH);
    let stored = raw === null ? null : (JSON.parse(Buffer.from(raw).toString('utf8')) as { name: string; id: string });
    if (stored === null) {
      stored = { name: deps.clusterName ?? `strongroom-cluster-${randomBytes(4).toString('hex')}`, id: randomUUID() };
      await barrier.put(CLUSTER_INFO_PATH, Buffer.from(JSON.stringify(stored)));
    }
    cluster = { name: deps.clusterName ?? stored.name, id: stored.id };
  };

  // After the barrier opens: cluster info, then the core's hooks. If any of it
  // fails the server seals again rather than run half set up.
  const afterUnseal = async (list: SealHook[][]) => {
    try {
      await loadCluster();
      for (const l of list) await runHooks(l);
    } catch (err) {
      barrier.seal();
      cluster = null;
      throw err;
    }
  };

  const status = async (): Promise<SealStatus> => {
    const init = await initialized();
    const sealed = barrier.sealed;
    return {
      type: 'shamir',
      initialized: init,
      sealed,
      t: init && config ? config.secret_threshold : 0,
      n: init && config ? config.secret_shares : 0,
      progress: parts.length,
      nonce,
      version,
      build_date: buildDate,
      migration: false,
      ...(!sealed && cluster ? { cluster_name: cluster.name, cluster_id: cluster.id } : {}),
      recovery_seal: false,
      storage_type: storageType,
    };
  };

  const initialize = (cfg: SealConfig, keepUnsealed: boolean): Promise<InitResult> =>
    exclusive(async () => {
      if (await initialized()) throw badRequest('Vault is already initialized');
      const key = randomBytes(KEY_BYTES);
      const shares = cfg.secret_shares === 1 ? [Buffer.from(key)] : split(key, cfg.secret_shares, cfg.secret_threshold);
      try {
        await barrier.initialize(key, {
          extraOps: [{ type: 'put', key: SEAL_CONFIG_PATH, value: Buffer.from(JSON.stringify(cfg)) }],
        });
        config = cfg;
        knownInitialized = true;
        resetProgress();
        await barrier.unseal(key);
        await afterUnseal(keepUnsealed ? [hooks.init, hooks.unseal] : [hooks.init]);
        if (!keepUnsealed) {
          barrier.seal();
          cluster = null;
        }
        return { keys: shares.map((s) => s.toString('hex')), keys_base64: shares.map((s) => s.toString('base64')) };
      } finally {
        key.fill(0);
        for (const s of shares) s.fill(0);
      }
    });

  return {
    status,
    initialized,
    init: async (request) => initialize(parseInit(request), false),
    initDev: () => initialize({ type: 'shamir', secret_shares: 1, secret_threshold: 1 }, true),

    submitUnsealKey: (key, opts = {}) =>
      exclusive(async () => {
        if (opts.reset) {
          resetProgress();
          return status();
        }
        if (opts.migrate) throw badRequest('migrate: seal migration is not supported');
        const cfg = (await initialized()) ? config : null;
        if (cfg === null) throw badRequest('Vault is not initialized');
        if (!barrier.sealed) return status();
        if (typeof key !== 'string' || key === '') {
          throw badRequest("'key' must be specified in request body as JSON, or 'reset' set to true");
        }
        const part = decodePart(key.trim());
        const expected = cfg.secret_shares === 1 ? KEY_BYTES : KEY_BYTES + 1;
        if (part.length !== expected) {
          part.fill(0);
          throw badRequest(`'key' must be ${expected} bytes long`);
        }
        if (parts.some((p) => timingSafeEqual(p, part))) {
          part.fill(0);
          return status();
        }
        if (nonce === '') nonce = randomUUID();
        parts.push(part);
        if (parts.length < cfg.secret_threshold) return status();

        let unsealKey: Buffer | null = null;
        try {
          unsealKey = cfg.secret_shares === 1 ? Buffer.from(part) : combine(parts);
          await barrier.unseal(unsealKey);
        } catch (err) {
          const wrongKey = err instanceof ShamirError || (err instanceof StrongroomError && err.code === 'bad_request');
          if (!wrongKey) throw err;
          throw badRequest('invalid key: the unseal key shares do not open the barrier; unseal progress was reset');
        } finally {
          unsealKey?.fill(0);
          resetProgress();
        }
        await afterUnseal([hooks.unseal]);
        return status();
      }),

    sealConfig: async () => ((await initialized()) && config ? { secret_shares: config.secret_shares, secret_threshold: config.secret_threshold } : null),

    verifyParts: async (given) => {
      const cfg = (await initialized()) ? config : null;
      if (!cfg || given.length < cfg.secret_threshold) return false;
      const expected = cfg.secret_shares === 1 ? KEY_BYTES : KEY_BYTES + 1;
      if (given.some((p) => p.length !== expected)) return false;
      let key: Buffer | null = null;
      try {
        key = cfg.secret_shares === 1 ? Buffer.from(given[0]!) : combine([...given]);
        return key.length === KEY_BYTES && (await barrier.verifyUnsealKey(key));
      } catch (err) {
        if (err instanceof ShamirError) return false;
        throw err;
      } finally {
        key?.fill(0);
      }
    },

    prepareRekey: (next) => {
      const cfg: SealConfig = { type: 'shamir', secret_shares: next.secret_shares, secret_threshold: next.secret_threshold };
      const key = randomBytes(KEY_BYTES);
      const shares = cfg.secret_shares === 1 ? [Buffer.from(key)] : split(key, cfg.secret_shares, cfg.secret_threshold);
      const out = { keys: shares.map((s) => s.toString('hex')), keys_base64: shares.map((s) => s.toString('base64')) };
      for (const s of shares) s.fill(0);
      let spent = false;
      const discard = () => {
        key.fill(0);
        spent = true;
      };
      return {
        ...out,
        secret_shares: cfg.secret_shares,
        secret_threshold: cfg.secret_threshold,
        matches: (parts) => {
          if (spent || parts.length < cfg.secret_threshold) return false;
          let got: Buffer | null = null;
          try {
            got = cfg.secret_shares === 1 ? Buffer.from(parts[0]!) : combine([...parts]);
            return got.length === key.length && timingSafeEqual(got, key);
          } catch (err) {
            if (err instanceof ShamirError) return false;
            throw err;
          } finally {
            got?.fill(0);
          }
        },
        commit: () =>
          exclusive(async () => {
            if (spent) throw badRequest('this rekey is no longer in progress');
            if (barrier.sealed) throw new StrongroomError('unavailable', 'Vault is sealed');
            try {
              await barrier.rekey(key, { extraOps: [{ type: 'put', key: SEAL_CONFIG_PATH, value: Buffer.from(JSON.stringify(cfg)) }] });
              config = cfg;
              resetProgress();
            } finally {
              discard();
            }
          }),
        discard,
      };
    },

    seal: () =>
      exclusive(async () => {
        resetProgress();
        if (barrier.sealed) return;
        const started = Date.now();
        // Sealing must happen whatever a hook does: a failing hook is logged and the next one still runs.
        for (const cb of [...hooks.seal]) {
          try {
            await cb();
          } catch (err) {
            deps.log?.error('seal hook failed', { error: err instanceof Error ? err.message : String(err) });
          }
        }
        barrier.seal();
        cluster = null;
        deps.log?.info('sealed', { ms: Date.now() - started });
      }),

    storageReplaced: () => {
      config = null;
      knownInitialized = false;
    },

    onInit: (cb) => subscribe(hooks.init, cb),
    onUnseal: (cb) => subscribe(hooks.unseal, cb),
    onSeal: (cb) => subscribe(hooks.seal, cb),
  };
}

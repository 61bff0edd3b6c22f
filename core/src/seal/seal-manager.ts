/**
 * The seal: `sys/init`, `sys/unseal`, `sys/seal`, `sys/seal-status`.
 *
 * Two kinds. Shamir: the unseal key is split into shares the operators hold.
 * Static (seal/static-seal.ts): a random unseal key is stored wrapped by the
 * operator's seal key and the server unseals itself at start (`autoUnseal`);
 * recovery key shares, checked against a recovery key stored wrapped the same
 * way, take the unseal keys' place for generate-root and for unsealing after
 * `sys/seal`. Migration (Vault's `unseal -migrate`) starts when the stored
 * seal and the config's differ: Shamir to static keeps the old unseal key as
 * the recovery key and rekeys the barrier under a fresh stored key; static to
 * Shamir (the stanza `disabled`) makes the recovery key the unseal key.
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
import { KEY_BYTES, RECOVERY_CONFIG_PATH, RECOVERY_KEY_PATH, SEAL_CONFIG_PATH, SEAL_STORED_KEY_PATH, type Barrier } from '../barrier/barrier.js';
import type { PhysicalOp } from '../storage/physical.js';
import { ShamirError, combine, split } from '../barrier/shamir.js';
import { SealKeyError, type StaticSeal } from './static-seal.js';

/** Behind the barrier: the cluster's name and id, shown once unsealed. */
const CLUSTER_INFO_PATH = 'core/cluster/local/info';

export type SealType = 'shamir' | 'static';

export interface SealStatus {
  /** The stored seal's type (before init: the configured one). */
  type: SealType;
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  nonce: string;
  version: string;
  build_date: string;
  /** The config's seal differs from the stored one: unseal takes `migrate` (t and n are of the keys asked for). */
  migration: boolean;
  cluster_name?: string;
  cluster_id?: string;
  /** An auto seal: t and n are the recovery keys'. */
  recovery_seal: boolean;
  recovery_seal_type?: 'shamir';
  storage_type: string;
}

export interface InitResult {
  /** The unseal key shares, hex; with one share, the unseal key itself (as Vault does). None with a static seal. */
  keys: string[];
  keys_base64: string[];
}

/** What init answers: with a static seal, the recovery key shares too (`_base64` is Vault's API name, `_b64` its CLI's). */
export type InitAnswer = InitResult & { recovery_keys?: string[]; recovery_keys_base64?: string[]; recovery_keys_b64?: string[] };

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

/** A set of key shares the operators hold: its shares and threshold, a check of given shares, and a rekey. */
export interface KeyHolders {
  sealConfig(): Promise<{ secret_shares: number; secret_threshold: number } | null>;
  verifyParts(parts: readonly Buffer[]): Promise<boolean>;
  prepareRekey(cfg: { secret_shares: number; secret_threshold: number }): PendingRekey;
}

export interface SealManager {
  status(): Promise<SealStatus>;
  initialized(): Promise<boolean>;
  /**
   * Validates `{ secret_shares, secret_threshold }` (with a static seal,
   * `{ recovery_shares, recovery_threshold }`; 400 naming the field),
   * initializes, runs onInit hooks while briefly unsealed, and leaves the
   * server sealed (with a static seal: unsealed, as after an auto-unseal).
   */
  init(request: unknown): Promise<InitAnswer>;
  /** At start: with a static seal, unwraps the stored key and unseals (SealKeyError on a wrong or missing key); otherwise nothing. */
  autoUnseal(): Promise<SealStatus>;
  /** Dev server: one share, threshold 1, left unsealed (onInit then onUnseal hooks run). */
  initDev(): Promise<InitResult>;
  /** One unseal part (a recovery key share with a static seal), hex or base64. Unseals at the threshold (running onUnseal hooks); `migrate` completes a pending seal migration. */
  submitUnsealKey(key: string | undefined, opts?: { reset?: boolean; migrate?: boolean }): Promise<SealStatus>;
  /** Shares and threshold of the current Shamir unseal key; null before init and with a static seal. */
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
  /** The same three over the recovery keys (a static seal; sealConfig() is null otherwise): sys/rekey-recovery-key. */
  readonly recoveryKeys: KeyHolders;
  /** The keys that authorize generate-root: the unseal keys, or with a static seal the recovery keys. */
  readonly rootKeys: KeyHolders;
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
  physical: Pick<Physical, 'get' | 'batch'>;
  barrier: Pick<Barrier, 'initialized' | 'initialize' | 'unseal' | 'seal' | 'sealed' | 'get' | 'put' | 'verifyUnsealKey' | 'rekey'>;
  clusterName?: string;
  storageType?: string;
  version?: string;
  buildDate?: string;
  log?: { error(message: string, meta?: Record<string, unknown>): void; info(message: string, meta?: Record<string, unknown>): void };
  /** The config's `seal "static"` stanza with its keys; absent: Shamir. */
  staticSeal?: StaticSeal;
}

interface SealConfig {
  type: SealType;
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

const recoveryInitSchema = z.object({
  recovery_shares: count('recovery_shares'),
  recovery_threshold: count('recovery_threshold'),
  recovery_pgp_keys: z.array(z.string()).optional(),
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
  if (!r.success) throw zodBadRequest(r.error);
  const { secret_shares: n, secret_threshold: t, pgp_keys, root_token_pgp_key } = r.data;
  const problems: string[] = [];
  if (pgp_keys && pgp_keys.length > 0) problems.push('pgp_keys is not supported');
  if (root_token_pgp_key) problems.push('root_token_pgp_key is not supported');
  checkShares(n, t, 'secret', problems);
  return { type: 'shamir', secret_shares: n, secret_threshold: t };
}

/** A static seal's init: the recovery shares and threshold (the secret_* of a Shamir init are ignored, as Vault's CLI always sends them). */
function parseRecoveryInit(request: unknown): SealConfig {
  const r = recoveryInitSchema.safeParse(withoutNulls(request));
  if (!r.success) throw zodBadRequest(r.error);
  const { recovery_shares: n, recovery_threshold: t, recovery_pgp_keys } = r.data;
  const problems: string[] = [];
  if (recovery_pgp_keys && recovery_pgp_keys.length > 0) problems.push('recovery_pgp_keys is not supported');
  checkShares(n, t, 'recovery', problems);
  return { type: 'shamir', secret_shares: n, secret_threshold: t };
}

function zodBadRequest(error: z.ZodError): StrongroomError {
  const details = error.issues.map((i) => (i.code === 'invalid_union' || i.code === 'custom' ? i.message : `${i.path.join('.')}: ${i.message}`));
  return badRequest(details[0] ?? 'invalid request', details);
}

/** Vault's rules for a share count and threshold; throws the first problem (after any already found). */
function checkShares(n: number, t: number, prefix: 'secret' | 'recovery', problems: string[]): void {
  if (n < 1) problems.push(`${prefix}_shares must be at least 1`);
  if (n > 255) problems.push(`${prefix}_shares must be at most 255`);
  if (t < 1) problems.push(`${prefix}_threshold must be at least 1`);
  if (t > n && n >= 1) problems.push(`${prefix}_threshold must be less than or equal to ${prefix}_shares`);
  if (n > 1 && t === 1) problems.push(`${prefix}_threshold must be greater than 1 when ${prefix}_shares is greater than 1`);
  if (problems.length > 0) throw badRequest(problems[0] as string, problems);
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
  const autoSeal = deps.staticSeal ?? null;
  const storageType = deps.storageType ?? 'level';
  const version = deps.version ?? '0.1.0';
  const buildDate = deps.buildDate ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const hooks = { init: [] as SealHook[], unseal: [] as SealHook[], seal: [] as SealHook[] };

  let config: SealConfig | null = null;
  /** With a static seal: the recovery key shares and threshold. */
  let recoveryConfig: SealConfig | null = null;
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

  const readJson = async (path: string): Promise<SealConfig | null> => {
    const raw = await physical.get(path);
    return raw === null ? null : (JSON.parse(Buffer.from(raw).toString('utf8')) as SealConfig);
  };
  const configOp = (path: string, cfg: SealConfig): PhysicalOp => ({ type: 'put', key: path, value: Buffer.from(JSON.stringify(cfg)) });

  const loadConfig = async (): Promise<SealConfig | null> => {
    if (config) return config;
    const parsed = await readJson(SEAL_CONFIG_PATH);
    if (parsed === null) return null;
    parsed.type ??= 'shamir';
    if (parsed.type === 'static') recoveryConfig = await readJson(RECOVERY_CONFIG_PATH);
    config = parsed;
    return parsed;
  };

  const initialized = async (): Promise<boolean> => {
    if (knownInitialized) return true;
    knownInitialized = (await loadConfig()) !== null && (await barrier.initialized());
    return knownInitialized;
  };

  /** The stored seal and the config's differ: 'to-static' (Shamir stored, static configured) or 'to-shamir' (static stored, its stanza disabled). */
  const migration = (): 'to-static' | 'to-shamir' | null => {
    if (!config) return null;
    if (config.type === 'shamir' && autoSeal && !autoSeal.disabled) return 'to-static';
    if (config.type === 'static' && autoSeal?.disabled) return 'to-shamir';
    return null;
  };
  /** The seal's key, or a SealKeyError naming the stanza: the stored seal is static and the config has none. */
  const sealKey = (): StaticSeal => {
    if (autoSeal) return autoSeal;
    throw new SealKeyError(
      'the storage is sealed by a static seal and the configuration has no seal "static" stanza: add it (to migrate back to Shamir, with disabled = "true", then unseal with the recovery keys and -migrate)',
    );
  };
  /** Unwraps one of the seal's records; `rewrap` collects what was under the previous key. */
  const unwrapRecord = async (path: string, rewrap?: PhysicalOp[]): Promise<Buffer> => {
    const seal = sealKey();
    const rec = await physical.get(path);
    if (rec === null) throw new SealKeyError(`the stored record ${path} is missing`);
    const { plaintext, previous } = seal.unwrap(path, rec);
    if (previous && rewrap) rewrap.push({ type: 'put', key: path, value: seal.wrap(path, plaintext) });
    return plaintext;
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

  /** The shares unseal asks for now: the Shamir unseal key's, or with a static seal the recovery key's. */
  const askedConfig = (): SealConfig | null => (config?.type === 'static' ? recoveryConfig : config);

  const status = async (): Promise<SealStatus> => {
    const init = await initialized();
    const sealed = barrier.sealed;
    const type: SealType = init && config ? config.type : autoSeal && !autoSeal.disabled ? 'static' : 'shamir';
    const asked = init ? askedConfig() : null;
    return {
      type,
      initialized: init,
      sealed,
      t: asked ? asked.secret_threshold : 0,
      n: asked ? asked.secret_shares : 0,
      progress: parts.length,
      nonce,
      version,
      build_date: buildDate,
      migration: init && sealed && migration() !== null,
      ...(!sealed && cluster ? { cluster_name: cluster.name, cluster_id: cluster.id } : {}),
      recovery_seal: type === 'static',
      ...(type === 'static' ? { recovery_seal_type: 'shamir' as const } : {}),
      storage_type: storageType,
    };
  };

  const splitKey = (key: Buffer, cfg: SealConfig) => {
    const shares = cfg.secret_shares === 1 ? [Buffer.from(key)] : split(key, cfg.secret_shares, cfg.secret_threshold);
    const out = { keys: shares.map((s) => s.toString('hex')), keys_base64: shares.map((s) => s.toString('base64')) };
    for (const s of shares) s.fill(0);
    return out;
  };

  /** The key `given` (threshold many parts of `cfg`) combine to, or null when they cannot; the caller wipes it. */
  const combineParts = (cfg: SealConfig | null, given: readonly Buffer[]): Buffer | null => {
    if (!cfg || given.length < cfg.secret_threshold) return null;
    const expected = cfg.secret_shares === 1 ? KEY_BYTES : KEY_BYTES + 1;
    if (given.some((p) => p.length !== expected)) return null;
    try {
      const key = cfg.secret_shares === 1 ? Buffer.from(given[0]!) : combine([...given]);
      if (key.length === KEY_BYTES) return key;
      key.fill(0);
      return null;
    } catch (err) {
      if (err instanceof ShamirError) return null;
      throw err;
    }
  };

  /** Whether `key` is the stored recovery key (constant time). */
  const isRecoveryKey = async (key: Buffer): Promise<boolean> => {
    const stored = await unwrapRecord(RECOVERY_KEY_PATH);
    try {
      return stored.length === key.length && timingSafeEqual(stored, key);
    } finally {
      stored.fill(0);
    }
  };

  const initialize = (cfg: SealConfig, keepUnsealed: boolean, recovery: SealConfig | null): Promise<InitAnswer> =>
    exclusive(async () => {
      if (await initialized()) throw badRequest('Vault is already initialized');
      const key = randomBytes(KEY_BYTES);
      const recoveryKey = recovery ? randomBytes(KEY_BYTES) : null;
      try {
        const extraOps: PhysicalOp[] = [configOp(SEAL_CONFIG_PATH, cfg)];
        if (recovery && recoveryKey) {
          const seal = sealKey();
          extraOps.push(
            configOp(RECOVERY_CONFIG_PATH, recovery),
            { type: 'put', key: SEAL_STORED_KEY_PATH, value: seal.wrap(SEAL_STORED_KEY_PATH, key) },
            { type: 'put', key: RECOVERY_KEY_PATH, value: seal.wrap(RECOVERY_KEY_PATH, recoveryKey) },
          );
        }
        await barrier.initialize(key, { extraOps });
        config = cfg;
        recoveryConfig = recovery;
        knownInitialized = true;
        resetProgress();
        await barrier.unseal(key);
        await afterUnseal(keepUnsealed ? [hooks.init, hooks.unseal] : [hooks.init]);
        if (!keepUnsealed) {
          barrier.seal();
          cluster = null;
        }
        if (!recovery || !recoveryKey) return splitKey(key, cfg);
        const r = splitKey(recoveryKey, recovery);
        return { keys: [], keys_base64: [], recovery_keys: r.keys, recovery_keys_base64: r.keys_base64, recovery_keys_b64: r.keys_base64 };
      } finally {
        key.fill(0);
        recoveryKey?.fill(0);
      }
    });

  /** Shamir to static, the barrier open under `oldKey`: it becomes the recovery key; a fresh key, wrapped by the seal, opens the barrier. */
  const migrateToStatic = async (oldKey: Buffer) => {
    const seal = sealKey();
    const recovery: SealConfig = { type: 'shamir', secret_shares: config!.secret_shares, secret_threshold: config!.secret_threshold };
    const next: SealConfig = { type: 'static', secret_shares: 1, secret_threshold: 1 };
    const fresh = randomBytes(KEY_BYTES);
    try {
      await barrier.rekey(fresh, {
        extraOps: [
          configOp(SEAL_CONFIG_PATH, next),
          configOp(RECOVERY_CONFIG_PATH, recovery),
          { type: 'put', key: SEAL_STORED_KEY_PATH, value: seal.wrap(SEAL_STORED_KEY_PATH, fresh) },
          { type: 'put', key: RECOVERY_KEY_PATH, value: seal.wrap(RECOVERY_KEY_PATH, oldKey) },
        ],
      });
    } finally {
      fresh.fill(0);
    }
    config = next;
    recoveryConfig = recovery;
    deps.log?.info?.('seal migrated from shamir to static: the old unseal keys are now the recovery keys');
  };

  /** Static to Shamir, the barrier open: the recovery key becomes the unseal key; the seal's records go. */
  const migrateToShamir = async (recoveryKey: Buffer) => {
    const next: SealConfig = { type: 'shamir', secret_shares: recoveryConfig!.secret_shares, secret_threshold: recoveryConfig!.secret_threshold };
    await barrier.rekey(recoveryKey, {
      extraOps: [configOp(SEAL_CONFIG_PATH, next), { type: 'delete', key: RECOVERY_CONFIG_PATH }, { type: 'delete', key: SEAL_STORED_KEY_PATH }, { type: 'delete', key: RECOVERY_KEY_PATH }],
    });
    config = next;
    recoveryConfig = null;
    deps.log?.info?.('seal migrated from static to shamir: the recovery keys are now the unseal keys');
  };

  /** Opens the barrier with the stored key the seal wraps; records under the previous key are wrapped again under the current one. */
  const openWithStoredKey = async () => {
    const rewrap: PhysicalOp[] = [];
    const kek = await unwrapRecord(SEAL_STORED_KEY_PATH, rewrap);
    try {
      (await unwrapRecord(RECOVERY_KEY_PATH, rewrap)).fill(0);
      try {
        await barrier.unseal(kek);
      } catch (err) {
        if (err instanceof StrongroomError && err.code === 'bad_request') throw new SealKeyError('the unwrapped key does not open the barrier');
        throw err;
      }
    } finally {
      kek.fill(0);
    }
    if (rewrap.length > 0) {
      await physical.batch(rewrap);
      deps.log?.info?.('seal: the stored keys were under previous_key_id; wrapped again under current_key_id', { current_key_id: sealKey().currentKeyId });
    }
  };

  /** Holders of a set of shares: `persist` puts a new key in force (the barrier open). */
  const holders = (current: () => SealConfig | null, verify: (key: Buffer) => Promise<boolean>, persist: (key: Buffer, cfg: SealConfig) => Promise<void>): KeyHolders => ({
    sealConfig: async () => {
      const cfg = (await initialized()) ? current() : null;
      return cfg ? { secret_shares: cfg.secret_shares, secret_threshold: cfg.secret_threshold } : null;
    },
    verifyParts: async (given) => {
      const key = (await initialized()) ? combineParts(current(), given) : null;
      if (!key) return false;
      try {
        return await verify(key);
      } finally {
        key.fill(0);
      }
    },
    prepareRekey: (next) => {
      const cfg: SealConfig = { type: 'shamir', secret_shares: next.secret_shares, secret_threshold: next.secret_threshold };
      const key = randomBytes(KEY_BYTES);
      const out = splitKey(key, cfg);
      let spent = false;
      const discard = () => {
        key.fill(0);
        spent = true;
      };
      return {
        ...out,
        secret_shares: cfg.secret_shares,
        secret_threshold: cfg.secret_threshold,
        matches: (given) => {
          if (spent) return false;
          const got = combineParts(cfg, given);
          try {
            return got !== null && timingSafeEqual(got, key);
          } finally {
            got?.fill(0);
          }
        },
        commit: () =>
          exclusive(async () => {
            if (spent) throw badRequest('this rekey is no longer in progress');
            if (barrier.sealed) throw new StrongroomError('unavailable', 'Vault is sealed');
            try {
              await persist(key, cfg);
              resetProgress();
            } finally {
              discard();
            }
          }),
        discard,
      };
    },
  });

  const unsealKeys = holders(
    () => (config?.type === 'shamir' ? config : null),
    (key) => barrier.verifyUnsealKey(key),
    async (key, cfg) => {
      await barrier.rekey(key, { extraOps: [configOp(SEAL_CONFIG_PATH, cfg)] });
      config = cfg;
    },
  );
  const recoveryKeys = holders(
    () => (config?.type === 'static' ? recoveryConfig : null),
    isRecoveryKey,
    async (key, cfg) => {
      const seal = sealKey();
      await physical.batch([configOp(RECOVERY_CONFIG_PATH, cfg), { type: 'put', key: RECOVERY_KEY_PATH, value: seal.wrap(RECOVERY_KEY_PATH, key) }]);
      recoveryConfig = cfg;
    },
  );
  const isStatic = () => config?.type === 'static';

  return {
    status,
    initialized,
    init: async (request) => {
      if (autoSeal && !autoSeal.disabled) return initialize({ type: 'static', secret_shares: 1, secret_threshold: 1 }, true, parseRecoveryInit(request));
      const cfg = parseInit(request);
      const r = withoutNulls(request) as Record<string, unknown>;
      for (const f of ['recovery_shares', 'recovery_threshold'] as const) {
        if (r[f] !== undefined && r[f] !== 0 && r[f] !== '0') throw badRequest(`${f}: recovery keys exist only with an auto seal (seal "static" in the configuration)`);
      }
      return initialize(cfg, false, null);
    },
    initDev: () => initialize({ type: 'shamir', secret_shares: 1, secret_threshold: 1 }, true, null),

    autoUnseal: () =>
      exclusive(async () => {
        if (!(await initialized()) || !barrier.sealed) return status();
        const pending = migration();
        if (pending) {
          deps.log?.info?.(`seal migration pending (${pending === 'to-static' ? 'shamir to static' : 'static to shamir'}): unseal with the ${pending === 'to-static' ? 'unseal' : 'recovery'} keys and -migrate`);
          return status();
        }
        if (config!.type !== 'static') return status();
        await openWithStoredKey();
        await afterUnseal([hooks.unseal]);
        return status();
      }),

    submitUnsealKey: (key, opts = {}) =>
      exclusive(async () => {
        if (opts.reset) {
          resetProgress();
          return status();
        }
        const cfg = (await initialized()) ? config : null;
        if (cfg === null) throw badRequest('Vault is not initialized');
        if (!barrier.sealed) return status();
        const pending = migration();
        if (opts.migrate && !pending) throw badRequest('migrate: no seal migration is pending (the configuration\'s seal matches the stored one)');
        if (pending && !opts.migrate) throw badRequest(`a seal migration is pending: give the ${pending === 'to-static' ? 'unseal' : 'recovery'} keys with migrate set (operator unseal -migrate)`);
        const asked = askedConfig();
        if (asked === null) throw new StrongroomError('internal', 'the recovery key configuration is missing');
        if (typeof key !== 'string' || key === '') {
          throw badRequest("'key' must be specified in request body as JSON, or 'reset' set to true");
        }
        const part = decodePart(key.trim());
        const expected = asked.secret_shares === 1 ? KEY_BYTES : KEY_BYTES + 1;
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
        if (parts.length < asked.secret_threshold) return status();

        let unsealKey: Buffer | null = null;
        const what = cfg.type === 'static' ? 'recovery' : 'unseal';
        try {
          unsealKey = asked.secret_shares === 1 ? Buffer.from(part) : combine(parts);
          if (cfg.type === 'static') {
            if (!(await isRecoveryKey(unsealKey))) throw badRequest('invalid key');
            await openWithStoredKey();
          } else {
            await barrier.unseal(unsealKey);
          }
        } catch (err) {
          unsealKey?.fill(0);
          const wrongKey = err instanceof ShamirError || (err instanceof StrongroomError && err.code === 'bad_request');
          if (!wrongKey) throw err;
          throw badRequest(`invalid key: the ${what} key shares do not open the barrier; unseal progress was reset`);
        } finally {
          resetProgress();
        }
        try {
          if (pending === 'to-static') await migrateToStatic(unsealKey!);
          else if (pending === 'to-shamir') await migrateToShamir(unsealKey!);
        } catch (err) {
          barrier.seal();
          throw err;
        } finally {
          unsealKey!.fill(0);
        }
        await afterUnseal([hooks.unseal]);
        return status();
      }),

    sealConfig: unsealKeys.sealConfig,
    verifyParts: unsealKeys.verifyParts,
    prepareRekey: unsealKeys.prepareRekey,
    recoveryKeys,
    rootKeys: {
      sealConfig: () => (isStatic() ? recoveryKeys : unsealKeys).sealConfig(),
      verifyParts: (given) => (isStatic() ? recoveryKeys : unsealKeys).verifyParts(given),
      prepareRekey: (next) => (isStatic() ? recoveryKeys : unsealKeys).prepareRekey(next),
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
      recoveryConfig = null;
      knownInitialized = false;
    },

    onInit: (cb) => subscribe(hooks.init, cb),
    onUnseal: (cb) => subscribe(hooks.unseal, cb),
    onSeal: (cb) => subscribe(hooks.seal, cb),
  };
}

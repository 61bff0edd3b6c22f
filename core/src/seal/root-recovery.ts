/**
 * Root recovery ceremonies that take the operators' unseal key shares while
 * the server runs: generate-root (a new root token, returned XOR'd with a
 * one-time password, Vault's OTP scheme) and rekey (new shares and threshold;
 * the old shares stop working). With `require_verification`, a rekey's new
 * shares are handed out first and put in force only once the threshold of
 * them is given back at sys/rekey/verify (Vault's rekey verification): until
 * then the old shares stay the valid ones.
 *
 * Security invariants:
 * - the new root token never travels in clear: only base64(token XOR otp),
 *   and the OTP is shown once, to whoever started the attempt;
 * - shares are checked together against the stored root key before anything
 *   happens; a wrong set ends the attempt's progress, so shares cannot be
 *   guessed one by one on top of a bad one;
 * - submitted shares are compared in constant time, kept only until the
 *   threshold is reached or the attempt ends, then zeroed;
 * - every step of an attempt carries its nonce, so a share meant for one
 *   attempt cannot complete another;
 * - a new key awaiting verification lives in memory only and is zeroed when
 *   the rekey is cancelled or completes.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { badRequest } from '@strongroom/sdk-plugin/host';
import { randomBase62 } from '@strongroom/sdk-plugin/host';
import { decodePart, type KeyHolders, type PendingRekey } from './seal-manager.js';

/** Length of a root token id (`srs.` + 24 base62) and so of the OTP (Vault's current scheme: 28). */
const OTP_LENGTH = 28;

interface Attempt {
  nonce: string;
  parts: Buffer[];
}

/** Share collection common to both ceremonies: nonce check, duplicate check, threshold. */
function createShareCollector(kind: string) {
  let attempt: Attempt | null = null;
  // One share at a time: two shares arriving together must not both complete.
  let queue: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => undefined);
    return run;
  };
  const clearParts = () => {
    if (attempt) for (const p of attempt.parts) p.fill(0);
    if (attempt) attempt.parts = [];
  };
  const end = () => {
    clearParts();
    attempt = null;
  };
  return {
    get attempt() {
      return attempt;
    },
    begin(): Attempt {
      if (attempt) throw badRequest(`${kind} already in progress`);
      attempt = { nonce: randomUUID(), parts: [] };
      return attempt;
    },
    end,
    /** Drops the shares given so far; the attempt and its nonce stay. */
    clearParts,
    exclusive,
    /** Adds a share; resolves to the full set once `threshold` are in (the caller must then `end()`). */
    add(key: unknown, nonce: unknown, threshold: number): Buffer[] | null {
      if (!attempt) throw badRequest(`no ${kind} in progress`);
      if (typeof key !== 'string' || key.trim() === '') throw badRequest('key: missing required parameter');
      if (typeof nonce !== 'string' || nonce === '') throw badRequest('nonce: missing required parameter');
      const a = Buffer.from(nonce);
      const b = Buffer.from(attempt.nonce);
      if (a.length !== b.length || !timingSafeEqual(a, b)) throw badRequest(`nonce: incorrect nonce for this ${kind}`);
      const part = decodePart(key.trim());
      if (attempt.parts.some((p) => p.length === part.length && timingSafeEqual(p, part))) {
        part.fill(0);
        throw badRequest(`key: given key has already been provided during this ${kind}`);
      }
      attempt.parts.push(part);
      return attempt.parts.length >= threshold ? attempt.parts : null;
    },
  };
}

export interface GenerateRootStatus {
  started: boolean;
  nonce: string;
  progress: number;
  required: number;
  encoded_token: string;
  encoded_root_token: string;
  pgp_fingerprint: string;
  otp: string;
  otp_length: number;
  complete: boolean;
}

/** `seal`: the keys that authorize it (SealManager.rootKeys: unseal keys, or a static seal's recovery keys). */
export function createGenerateRoot(deps: { seal: Pick<KeyHolders, 'sealConfig' | 'verifyParts'>; createRootToken(): Promise<string> }) {
  const shares = createShareCollector('root generation');
  let otp = '';

  const required = async () => (await deps.seal.sealConfig())?.secret_threshold ?? 0;
  const status = async (): Promise<GenerateRootStatus> => ({
    started: shares.attempt !== null,
    nonce: shares.attempt?.nonce ?? '',
    progress: shares.attempt?.parts.length ?? 0,
    required: await required(),
    encoded_token: '',
    encoded_root_token: '',
    pgp_fingerprint: '',
    otp: '',
    otp_length: OTP_LENGTH,
    complete: false,
  });
  const cancel = () => {
    shares.end();
    otp = '';
  };

  return {
    status,
    start: (input: { otp?: unknown; pgp_key?: unknown }) =>
      shares.exclusive(async () => {
        if (input.pgp_key !== undefined && input.pgp_key !== null && input.pgp_key !== '') throw badRequest('pgp_key: PGP-encrypted root tokens are not supported; use the OTP');
        let given = '';
        if (input.otp !== undefined && input.otp !== null && input.otp !== '') {
          if (typeof input.otp !== 'string' || input.otp.length !== OTP_LENGTH) throw badRequest(`otp: must be ${OTP_LENGTH} characters (or omitted: one is generated)`);
          given = input.otp;
        }
        shares.begin();
        otp = given || randomBase62(OTP_LENGTH);
        // The generated OTP is shown once, here; an operator-chosen one is never echoed.
        return { ...(await status()), otp: given ? '' : otp };
      }),
    cancel: () => shares.exclusive(async () => cancel()),
    update: (input: { key?: unknown; nonce?: unknown }) =>
      shares.exclusive(async () => {
        const need = await required();
        const full = shares.add(input.key, input.nonce, need);
        if (!full) return status();
        const nonce = shares.attempt!.nonce;
        const pad = otp;
        try {
          if (!(await deps.seal.verifyParts(full))) throw badRequest('key: the unseal key shares do not combine to the unseal key; the root generation progress was reset');
        } catch (err) {
          cancel();
          throw err;
        }
        cancel();
        const token = Buffer.from(await deps.createRootToken(), 'utf8');
        const key = Buffer.from(pad, 'utf8');
        if (token.length !== key.length) throw badRequest('the root token and the OTP differ in length');
        const encoded = Buffer.alloc(token.length);
        for (let i = 0; i < token.length; i++) encoded[i] = token[i]! ^ key[i]!;
        token.fill(0);
        // Vault's current scheme: unpadded standard base64 of token XOR otp.
        const text = encoded.toString('base64').replace(/=+$/, '');
        return { started: true, nonce, progress: need, required: need, encoded_token: text, encoded_root_token: text, pgp_fingerprint: '', otp: '', otp_length: OTP_LENGTH, complete: true };
      }),
  };
}

export interface RekeyStatus {
  started: boolean;
  nonce: string;
  t: number;
  n: number;
  progress: number;
  required: number;
  pgp_fingerprints: null;
  backup: boolean;
  verification_required: boolean;
  verification_nonce?: string;
}

export interface RekeyVerifyStatus {
  started: boolean;
  nonce: string;
  t: number;
  n: number;
  progress: number;
}

/**
 * `seal`: the key shares rekeyed (the unseal keys, or the recovery keys);
 * `unavailable`: the 400 when this server has none of them (sealConfig() null).
 */
export function createRekey(deps: { seal: KeyHolders; parseConfig(input: unknown): { secret_shares: number; secret_threshold: number }; unavailable: string }) {
  const shares = createShareCollector('rekey');
  // The new shares given back, under their own nonce (sys/rekey/verify).
  const checks = createShareCollector('rekey verification');
  // Every step goes through the one queue: a verification must not race an update or a cancel.
  const exclusive = shares.exclusive;
  let next: { cfg: { secret_shares: number; secret_threshold: number }; nonce: string; verify: boolean } | null = null;
  let pending: PendingRekey | null = null;

  const status = async (): Promise<RekeyStatus> => ({
    started: next !== null,
    nonce: next?.nonce ?? '',
    t: next?.cfg.secret_threshold ?? 0,
    n: next?.cfg.secret_shares ?? 0,
    progress: shares.attempt?.parts.length ?? 0,
    required: (await deps.seal.sealConfig())?.secret_threshold ?? 0,
    pgp_fingerprints: null,
    backup: false,
    verification_required: next?.verify ?? false,
    ...(checks.attempt ? { verification_nonce: checks.attempt.nonce } : {}),
  });
  const verifyStatus = (): RekeyVerifyStatus => {
    if (!next) throw badRequest('no rekey configuration found');
    return {
      started: checks.attempt !== null,
      nonce: checks.attempt?.nonce ?? '',
      t: next.cfg.secret_threshold,
      n: next.cfg.secret_shares,
      progress: checks.attempt?.parts.length ?? 0,
    };
  };
  const cancel = () => {
    shares.end();
    checks.end();
    pending?.discard();
    pending = null;
    next = null;
  };
  const isOn = (v: unknown) => v === true || v === 'true';

  return {
    status,
    start: (input: Record<string, unknown>) =>
      exclusive(async () => {
        if (isOn(input.backup)) throw badRequest('backup: PGP key backup is not supported');
        if (!(await deps.seal.sealConfig())) throw badRequest(deps.unavailable);
        const cfg = deps.parseConfig({ secret_shares: input.secret_shares, secret_threshold: input.secret_threshold, ...(input.pgp_keys ? { pgp_keys: input.pgp_keys } : {}) });
        if (next) throw badRequest('rekey already in progress');
        const attempt = shares.begin();
        next = { cfg, nonce: attempt.nonce, verify: isOn(input.require_verification) };
        return status();
      }),
    cancel: () => exclusive(async () => cancel()),
    update: (input: { key?: unknown; nonce?: unknown }) =>
      exclusive(async () => {
        if (pending) throw badRequest('rekey operation is in verification mode: give the new key shares to sys/rekey/verify');
        const cfg = await deps.seal.sealConfig();
        const full = shares.add(input.key, input.nonce, cfg?.secret_threshold ?? 1);
        if (!full) return status();
        const target = next!;
        let ok = false;
        try {
          ok = await deps.seal.verifyParts(full);
        } finally {
          if (!ok) cancel();
          else shares.end();
        }
        if (!ok) throw badRequest('key: the unseal key shares do not combine to the unseal key; the rekey progress was reset');
        const made = deps.seal.prepareRekey(target.cfg);
        const answer = { complete: true, nonce: target.nonce, keys: made.keys, keys_base64: made.keys_base64, pgp_fingerprints: null, backup: false };
        if (!target.verify) {
          try {
            await made.commit();
          } finally {
            cancel();
          }
          return { ...answer, verification_required: false, verification_nonce: '' };
        }
        // Not in force yet: the old shares stay valid until the new ones are given back.
        pending = made;
        const check = checks.begin();
        return { ...answer, verification_required: true, verification_nonce: check.nonce };
      }),
    verifyStatus: () => exclusive(async () => verifyStatus()),
    /** A fresh verification nonce and no progress; the rekey and its new shares stay. */
    verifyRestart: () =>
      exclusive(async () => {
        if (!next) throw badRequest('no rekey in progress');
        if (!pending) throw badRequest('no rekey verification in progress');
        checks.end();
        checks.begin();
        return verifyStatus();
      }),
    verify: (input: { key?: unknown; nonce?: unknown }) =>
      exclusive(async () => {
        if (!next) throw badRequest('no rekey in progress');
        if (!pending) throw badRequest('no rekey verification in progress');
        const made = pending;
        const full = checks.add(input.key, input.nonce, made.secret_threshold);
        if (!full) return verifyStatus();
        const nonce = checks.attempt!.nonce;
        const ok = made.matches(full);
        checks.clearParts();
        if (!ok) throw badRequest('rekey verification failed; incorrect key shares supplied (the verification progress was reset)');
        try {
          await made.commit();
        } finally {
          cancel();
        }
        return { nonce, complete: true };
      }),
  };
}

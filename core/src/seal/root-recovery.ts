/**
 * Root recovery ceremonies that take the operators' unseal key shares while
 * the server runs: generate-root (a new root token, returned XOR'd with a
 * one-time password, Vault's OTP scheme) and rekey (new shares and threshold;
 * the old shares stop working).
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
 *   attempt cannot complete another.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { badRequest } from '@strongroom/sdk-plugin/host';
import { randomBase62 } from '../token/ids.js';
import { decodePart, type InitResult } from './seal-manager.js';

/** Length of a root token id (`srs.` + 24 base62) and so of the OTP (Vault's current scheme: 28). */
const OTP_LENGTH = 28;

export interface RecoverySeal {
  sealConfig(): Promise<{ secret_shares: number; secret_threshold: number } | null>;
  verifyParts(parts: readonly Buffer[]): Promise<boolean>;
  rekey(cfg: { secret_shares: number; secret_threshold: number }): Promise<InitResult>;
}

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
  const end = () => {
    if (attempt) for (const p of attempt.parts) p.fill(0);
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

export function createGenerateRoot(deps: { seal: RecoverySeal; createRootToken(): Promise<string> }) {
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
}

export function createRekey(deps: { seal: RecoverySeal; parseConfig(input: unknown): { secret_shares: number; secret_threshold: number } }) {
  const shares = createShareCollector('rekey');
  let next: { secret_shares: number; secret_threshold: number } | null = null;

  const status = async (): Promise<RekeyStatus> => ({
    started: shares.attempt !== null,
    nonce: shares.attempt?.nonce ?? '',
    t: next?.secret_threshold ?? 0,
    n: next?.secret_shares ?? 0,
    progress: shares.attempt?.parts.length ?? 0,
    required: (await deps.seal.sealConfig())?.secret_threshold ?? 0,
    pgp_fingerprints: null,
    backup: false,
    verification_required: false,
  });
  const cancel = () => {
    shares.end();
    next = null;
  };
  const isOn = (v: unknown) => v === true || v === 'true';

  return {
    status,
    start: (input: Record<string, unknown>) =>
      shares.exclusive(async () => {
        if (isOn(input.require_verification)) throw badRequest('require_verification: rekey verification is not supported');
        if (isOn(input.backup)) throw badRequest('backup: PGP key backup is not supported');
        const cfg = deps.parseConfig({ secret_shares: input.secret_shares, secret_threshold: input.secret_threshold, ...(input.pgp_keys ? { pgp_keys: input.pgp_keys } : {}) });
        shares.begin();
        next = cfg;
        return status();
      }),
    cancel: () => shares.exclusive(async () => cancel()),
    update: (input: { key?: unknown; nonce?: unknown }) =>
      shares.exclusive(async () => {
        const cfg = await deps.seal.sealConfig();
        const full = shares.add(input.key, input.nonce, cfg?.secret_threshold ?? 1);
        if (!full) return status();
        const nonce = shares.attempt!.nonce;
        const target = next!;
        try {
          if (!(await deps.seal.verifyParts(full))) throw badRequest('key: the unseal key shares do not combine to the unseal key; the rekey progress was reset');
        } finally {
          cancel();
        }
        const result = await deps.seal.rekey(target);
        return { complete: true, nonce, keys: result.keys, keys_base64: result.keys_base64, pgp_fingerprints: null, backup: false, verification_required: false, verification_nonce: '' };
      }),
  };
}

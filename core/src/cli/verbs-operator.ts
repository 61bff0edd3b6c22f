/** `status` and `operator ...`: seal state, init, unseal, rekey, generate-root, step-down, key status. */
import { randomInt } from 'node:crypto';
import { UsageError } from './args.js';
import { boolFlag, CliError, ensureOk, flag, printData, type Command, type Ctx } from './command.js';
import { keyValues } from './output.js';
import { readSecret } from './secret-input.js';

function sealRows(b: any): Array<[string, unknown]> {
  const rows: Array<[string, unknown]> = [
    ['Seal Type', b.type],
    ['Initialized', b.initialized],
    ['Sealed', b.sealed],
    ['Total Shares', b.n],
    ['Threshold', b.t],
  ];
  if (b.recovery_seal) rows.splice(3, 2, ['Recovery Seal Type', b.recovery_seal_type ?? 'shamir'], ['Total Recovery Shares', b.n], ['Recovery Threshold', b.t]);
  if (b.sealed) rows.push(['Unseal Progress', `${b.progress}/${b.t}`], ['Unseal Nonce', b.nonce || 'n/a'], ['Seal Migration in Progress', b.migration === true]);
  rows.push(['Version', b.version], ['Build Date', b.build_date ?? 'n/a'], ['Storage Type', b.storage_type], ['Cluster Name', b.cluster_name || 'n/a'], ['Cluster ID', b.cluster_id || 'n/a']);
  return rows;
}

/** The key: the argument, else a hidden prompt on a terminal, else stdin (so keys stay out of shell history and `ps`). */
const keyArg = async (ctx: Ctx): Promise<string> => {
  const k = await readSecret(ctx.args.positionals[0], 'Unseal Key (will be hidden): ', boolFlag(ctx, 'non-interactive'));
  if (!k) throw new UsageError('an unseal key is required (argument, prompt, or on stdin)');
  return k;
};

const intFlag = (ctx: Ctx, name: string, dflt: number): number => {
  const v = flag(ctx, name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`-${name}: must be a positive integer`);
  return n;
};

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Vault's root-token decoding: base64(token XOR otp). */
function decodeRootToken(encoded: string, otp: string): string {
  const raw = Buffer.from(encoded, 'base64');
  const key = Buffer.from(otp, 'utf8');
  if (raw.length !== key.length) throw new UsageError(`the OTP (${key.length} bytes) and the encoded token (${raw.length} bytes) differ in length`);
  const out = Buffer.alloc(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw[i]! ^ key[i]!;
  return out.toString('utf8');
}

const ATTEMPT_FLAGS = {
  init: { kind: 'bool' as const, help: 'Start an attempt.' },
  cancel: { kind: 'bool' as const, help: 'Cancel the attempt in progress (its key shares are discarded).' },
  status: { kind: 'bool' as const, help: 'Print the progress of the attempt in progress.' },
  nonce: { kind: 'string' as const, help: 'Nonce of the attempt (given by -init); required with a key share.' },
};

/** `-target=recovery`: the recovery keys (sys/rekey-recovery-key/*) instead of the unseal keys (sys/rekey/*). */
function rekeyBase(ctx: Ctx): string {
  const target = flag(ctx, 'target') ?? 'barrier';
  if (target !== 'barrier' && target !== 'recovery') throw new UsageError('-target: must be "barrier" or "recovery"');
  return target === 'recovery' ? 'sys/rekey-recovery-key' : 'sys/rekey';
}

/** `operator rekey -verify`: the verification of a rekey's new shares (sys/rekey/verify). */
async function rekeyVerify(ctx: Ctx): Promise<void> {
  const base = rekeyBase(ctx);
  const show = (body: Record<string, any>) =>
    printData(ctx, body, () => keyValues(ctx.out, [['Verification Nonce', body.nonce || 'n/a'], ['Started', body.started], ['New Shares', body.n], ['New Threshold', body.t], ['Verification Progress', `${body.progress}/${body.t}`]]));
  if (boolFlag(ctx, 'cancel')) {
    const r = await ctx.client.delete(`${base}/verify`);
    ensureOk(r, 'restarting rekey verification');
    ctx.out('Success! Rekey verification restarted: give the new keys with the new nonce.');
    return show(r.body);
  }
  if (boolFlag(ctx, 'status')) {
    const r = await ctx.client.read(`${base}/verify`);
    ensureOk(r, 'reading rekey verification status');
    return show(r.body);
  }
  if (!flag(ctx, 'nonce')) throw new UsageError('-nonce (the verification nonce) is required with a key share (see -verify -status)');
  const r = await ctx.client.put(`${base}/verify`, { key: await keyArg(ctx), nonce: flag(ctx, 'nonce') });
  ensureOk(r, 'verifying rekey');
  if (!r.body.complete) return show(r.body);
  printData(ctx, r.body, () => ctx.out(`Success! Rekey verified: the new unseal keys are in force (nonce ${r.body.nonce}).`));
}

export const operatorVerbs: Record<string, Command> = {
  status: {
    usage: '[options]',
    synopsis: 'Print the seal status. Exit code: 0 unsealed, 2 sealed, 1 on any error (an unreachable server too).',
    max: 0,
    async run(ctx) {
      let r;
      try {
        r = await ctx.client.read('sys/seal-status');
      } catch (err) {
        throw new CliError(`Error checking seal status: ${err instanceof Error ? err.message : String(err)}`, 1);
      }
      if (r.status >= 400 || typeof r.body !== 'object' || r.body === null) {
        const errs = Array.isArray(r.body?.errors) ? r.body.errors.join(', ') : r.text;
        throw new CliError(`Error checking seal status: Code: ${r.status}. ${errs}`, 1);
      }
      const b = r.body;
      printData(ctx, b, () => keyValues(ctx.out, sealRows(b)));
      if (b.sealed) throw new CliError('', 2);
    },
  },
  'operator init': {
    usage: '[options]',
    synopsis: 'Initialize a new server: creates the root key, split into unseal key shares (with a static seal: recovery key shares, and the server unseals itself), and the initial root token.',
    flags: {
      'key-shares': { kind: 'string', help: 'Number of key shares (default 5).', aliases: ['n'] },
      'key-threshold': { kind: 'string', help: 'Shares needed to unseal (default 3).', aliases: ['t'] },
      'recovery-shares': { kind: 'string', help: 'With a static seal: number of recovery key shares (default 5).' },
      'recovery-threshold': { kind: 'string', help: 'With a static seal: recovery shares needed for generate-root, rekey and unseal after a seal (default 3).' },
      status: { kind: 'bool', help: 'Only tell whether the server is initialized: exit 0 yes, 2 no.' },
    },
    max: 0,
    async run(ctx) {
      if (boolFlag(ctx, 'status')) {
        const s = await ctx.client.read('sys/init');
        ensureOk(s, 'checking init status');
        if (s.body.initialized) return ctx.out('Strongroom is initialized');
        ctx.out('Strongroom is not initialized');
        throw new CliError('', 2);
      }
      // Which seal decides what is sent: the recovery_* parameters exist only with an auto seal (Vault's CLI does the same).
      const st = await ctx.client.read('sys/seal-status');
      ensureOk(st, 'reading the seal status');
      if (st.body.recovery_seal) {
        const r = await ctx.client.put('sys/init', { secret_shares: 1, secret_threshold: 1, recovery_shares: intFlag(ctx, 'recovery-shares', 5), recovery_threshold: intFlag(ctx, 'recovery-threshold', 3) });
        ensureOk(r, 'initializing');
        if (ctx.field || ctx.format !== 'table') return printData(ctx, r.body, () => undefined);
        (r.body.recovery_keys_base64 as string[]).forEach((k, i) => ctx.out(`Recovery Key ${i + 1}: ${k}`));
        ctx.out(`\nInitial Root Token: ${r.body.root_token}`);
        ctx.out(`\nStrongroom initialized with ${r.body.recovery_keys_base64.length} recovery key shares and a recovery key threshold of ${intFlag(ctx, 'recovery-threshold', 3)}. The server unsealed itself with its ${st.body.type} seal; the recovery keys authorize generate-root and rekey, and unseal after a seal. Keep them apart, in safe places.`);
        return;
      }
      const r = await ctx.client.put('sys/init', { secret_shares: intFlag(ctx, 'key-shares', 5), secret_threshold: intFlag(ctx, 'key-threshold', 3) });
      ensureOk(r, 'initializing');
      if (ctx.field || ctx.format !== 'table') return printData(ctx, r.body, () => undefined);
      (r.body.keys_base64 as string[]).forEach((k, i) => ctx.out(`Unseal Key ${i + 1}: ${k}`));
      ctx.out(`\nInitial Root Token: ${r.body.root_token}`);
      ctx.out(`\nStrongroom initialized with ${r.body.keys_base64.length} key shares and a key threshold of ${intFlag(ctx, 'key-threshold', 3)}. Keep the keys apart, in safe places.`);
    },
  },
  'operator unseal': {
    usage: '[options] [KEY]',
    synopsis: 'Give one unseal key share, or with a static seal a recovery key share (argument; else a hidden prompt on a terminal, or stdin). -reset discards the shares given so far; -migrate completes a seal migration.',
    flags: {
      reset: { kind: 'bool', help: 'Discard the key shares given so far.' },
      migrate: { kind: 'bool', help: 'Seal migration (the config\'s seal stanza differs from the stored seal): Shamir to static with the unseal keys, static to Shamir (stanza disabled = "true") with the recovery keys.' },
    },
    max: 1,
    async run(ctx) {
      const body = boolFlag(ctx, 'reset') ? { reset: true } : { key: await keyArg(ctx), ...(boolFlag(ctx, 'migrate') ? { migrate: true } : {}) };
      const r = await ctx.client.put('sys/unseal', body);
      ensureOk(r, 'unsealing');
      printData(ctx, r.body, () => keyValues(ctx.out, sealRows(r.body)));
    },
  },
  'operator seal': {
    usage: '[options]',
    synopsis: 'Seal the server: keys leave memory; it answers nothing until unsealed.',
    output: false,
    max: 0,
    async run(ctx) {
      const r = await ctx.client.put('sys/seal', {});
      ensureOk(r, 'sealing');
      ctx.out('Success! Strongroom is sealed.');
    },
  },
  'operator snapshot save': {
    usage: '[options] FILE',
    synopsis: 'Save a point-in-time snapshot of the whole store to FILE (still encrypted by the barrier; checksummed).',
    help: 'Taken while the server serves (sys/storage/snapshot, sudo). The file is written beside and renamed to FILE once complete.',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const file = ctx.args.positionals[0]!;
      const r = await ctx.client.download('sys/storage/snapshot', file);
      ensureOk(r, 'taking the snapshot');
      ctx.out(`Success! Snapshot saved to ${file}`);
    },
  },
  'operator snapshot restore': {
    usage: '[options] FILE',
    synopsis: 'Replace the whole store with the snapshot in FILE (sys/storage/snapshot-restore, sudo).',
    help:
      'A corrupt or truncated file, or a snapshot of another barrier, is refused and nothing changes. ' +
      "With -force another barrier's snapshot is restored and the server seals: that barrier's unseal keys open it. " +
      'Anything written after the snapshot was taken is lost (tokens, leases and secrets alike).',
    flags: { force: { kind: 'bool', help: "Restore even a snapshot of another barrier (sys/storage/snapshot-restore-force)." } },
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const file = ctx.args.positionals[0]!;
      const force = boolFlag(ctx, 'force');
      const r = await ctx.client.upload(force ? 'sys/storage/snapshot-restore-force' : 'sys/storage/snapshot-restore', file);
      ensureOk(r, 'restoring the snapshot');
      ctx.out(`Success! Snapshot restored from ${file}${force ? ' (forced: if it was of another barrier, the server is sealed; unseal it with that barrier\'s keys)' : ''}`);
    },
  },
  'operator step-down': {
    usage: '[options]',
    synopsis: 'Make the active node give up its role; a standby takes over (HA).',
    output: false,
    max: 0,
    async run(ctx) {
      const r = await ctx.client.put('sys/step-down', {});
      ensureOk(r, 'stepping down');
      ctx.out('Success! Stepped down.');
    },
  },
  'operator key-status': {
    usage: '[options]',
    synopsis: 'Show the active encryption key term and when it was installed.',
    max: 0,
    async run(ctx) {
      const r = await ctx.client.read('sys/key-status');
      ensureOk(r, 'reading key status');
      const d = r.body?.data ?? r.body;
      printData(ctx, d, () => keyValues(ctx.out, [['Key Term', d.term], ['Install Time', d.install_time], ['Encryption Count', d.encryptions ?? 'n/a']]));
    },
  },
  'operator rekey': {
    usage: '[options] [KEY]',
    synopsis: 'Make new unseal key shares (-target=recovery: recovery key shares): -init starts (with -key-shares/-key-threshold), then each holder gives a current share with -nonce; with -verify, the new shares take effect once holders give them back with -verify and the verification nonce.',
    flags: {
      ...ATTEMPT_FLAGS,
      'key-shares': { kind: 'string', help: 'Number of new key shares (with -init; default 5).', aliases: ['n'] },
      'key-threshold': { kind: 'string', help: 'New threshold (with -init; default 3).', aliases: ['t'] },
      verify: { kind: 'bool', help: 'With -init: require verification of the new shares. Otherwise act on the verification: give a new share (with -nonce, the verification nonce), -status, -cancel (restarts it).' },
      'backup-retrieve': { kind: 'bool', help: 'Read the backup of PGP-encrypted shares (never made here: PGP is not supported).' },
      'backup-delete': { kind: 'bool', help: 'Delete the backup of PGP-encrypted shares.' },
      target: { kind: 'string', help: '"barrier" (default): the unseal keys; "recovery": a static seal\'s recovery keys (sys/rekey-recovery-key), given with -nonce as for the unseal keys.' },
    },
    max: 1,
    async run(ctx) {
      const base = rekeyBase(ctx);
      if (boolFlag(ctx, 'backup-retrieve') || boolFlag(ctx, 'backup-delete')) {
        const retrieve = boolFlag(ctx, 'backup-retrieve');
        const r = retrieve ? await ctx.client.read('sys/rekey/backup') : await ctx.client.delete('sys/rekey/backup');
        ensureOk(r, retrieve ? 'retrieving backed-up keys' : 'deleting backed-up keys');
        return retrieve ? printData(ctx, r.body?.data, () => keyValues(ctx.out, [['Nonce', r.body.data.nonce]])) : ctx.out('Success! Deleted backed-up keys (if they existed)');
      }
      if (boolFlag(ctx, 'verify') && !boolFlag(ctx, 'init')) return rekeyVerify(ctx);
      if (boolFlag(ctx, 'cancel')) {
        const r = await ctx.client.delete(`${base}/init`);
        ensureOk(r, 'canceling rekey');
        return ctx.out('Success! Canceled rekeying (if it was started)');
      }
      if (boolFlag(ctx, 'status')) {
        const r = await ctx.client.read(`${base}/init`);
        ensureOk(r, 'reading rekey status');
        return printData(ctx, r.body, () => keyValues(ctx.out, [['Nonce', r.body.nonce || 'n/a'], ['Started', r.body.started], ['Rekey Progress', `${r.body.progress}/${r.body.required}`], ['New Shares', r.body.n], ['New Threshold', r.body.t]]));
      }
      if (boolFlag(ctx, 'init')) {
        const r = await ctx.client.put(`${base}/init`, { secret_shares: intFlag(ctx, 'key-shares', 5), secret_threshold: intFlag(ctx, 'key-threshold', 3), require_verification: boolFlag(ctx, 'verify') });
        ensureOk(r, 'initializing rekey');
        return printData(ctx, r.body, () => keyValues(ctx.out, [['Nonce', r.body.nonce], ['Started', r.body.started], ['Rekey Progress', `${r.body.progress}/${r.body.required}`], ['New Shares', r.body.n], ['New Threshold', r.body.t]]));
      }
      if (!flag(ctx, 'nonce')) throw new UsageError('-nonce is required with a key share (see -status)');
      const r = await ctx.client.put(`${base}/update`, { key: await keyArg(ctx), nonce: flag(ctx, 'nonce') });
      ensureOk(r, 'rekeying');
      if (!r.body.complete) return printData(ctx, r.body, () => keyValues(ctx.out, [['Nonce', r.body.nonce], ['Rekey Progress', `${r.body.progress}/${r.body.required}`]]));
      printData(ctx, r.body, () => {
        (r.body.keys_base64 as string[]).forEach((k, i) => ctx.out(`Key ${i + 1}: ${k}`));
        ctx.out(`\nOperation nonce: ${r.body.nonce}\n`);
        if (r.body.verification_required) {
          ctx.out(`The new unseal keys are not in effect yet: the current ones still unseal. Give the threshold of the new keys back with\n"operator rekey -verify -nonce=${r.body.verification_nonce} KEY" to put them in force.\n\nVerification nonce: ${r.body.verification_nonce}`);
        } else {
          ctx.out(`Strongroom rekeyed with ${r.body.keys_base64.length} key shares and a key threshold of ${r.body.t ?? 'the new threshold'}.`);
        }
      });
    },
  },
  'operator generate-root': {
    usage: '[options] [KEY]',
    synopsis: 'Make a new root token with unseal key shares: -init starts (an OTP is given), holders give shares with -nonce, -decode turns the encoded token into the token.',
    flags: {
      ...ATTEMPT_FLAGS,
      otp: { kind: 'string', help: 'The OTP given by -init (with -decode).' },
      decode: { kind: 'string', help: 'Decode this encoded root token with -otp (local; no server call).' },
      'generate-otp': { kind: 'bool', help: 'Print a new OTP of the length the server expects.' },
    },
    max: 1,
    async run(ctx) {
      if (flag(ctx, 'decode') !== undefined) {
        if (!flag(ctx, 'otp')) throw new UsageError('-decode needs -otp');
        const token = decodeRootToken(flag(ctx, 'decode')!, flag(ctx, 'otp')!);
        return printData(ctx, { token }, () => ctx.out(`Root token: ${token}`));
      }
      if (boolFlag(ctx, 'generate-otp')) {
        const s = await ctx.client.read('sys/generate-root/attempt');
        ensureOk(s, 'reading the OTP length');
        const len = Number(s.body.otp_length) || 28;
        let otp = '';
        for (let i = 0; i < len; i++) otp += BASE62[randomInt(BASE62.length)];
        return ctx.out(otp);
      }
      if (boolFlag(ctx, 'cancel')) {
        const r = await ctx.client.delete('sys/generate-root/attempt');
        ensureOk(r, 'canceling root generation');
        return ctx.out('Success! Root token generation canceled (if it was started)');
      }
      const attemptRows = (b: any): Array<[string, unknown]> => [['Nonce', b.nonce || 'n/a'], ['Started', b.started], ['Progress', `${b.progress}/${b.required}`], ['Complete', b.complete], ...(b.otp ? ([['OTP', b.otp], ['OTP Length', b.otp_length]] as Array<[string, unknown]>) : [])];
      if (boolFlag(ctx, 'status')) {
        const r = await ctx.client.read('sys/generate-root/attempt');
        ensureOk(r, 'reading root generation status');
        return printData(ctx, r.body, () => keyValues(ctx.out, attemptRows(r.body)));
      }
      if (boolFlag(ctx, 'init')) {
        const r = await ctx.client.put('sys/generate-root/attempt', flag(ctx, 'otp') ? { otp: flag(ctx, 'otp') } : {});
        ensureOk(r, 'starting root generation');
        return printData(ctx, r.body, () => keyValues(ctx.out, attemptRows(r.body)));
      }
      if (!flag(ctx, 'nonce')) throw new UsageError('-nonce is required with a key share (see -status)');
      const r = await ctx.client.put('sys/generate-root/update', { key: await keyArg(ctx), nonce: flag(ctx, 'nonce') });
      ensureOk(r, 'generating root');
      printData(ctx, r.body, () => keyValues(ctx.out, [...attemptRows(r.body), ...(r.body.encoded_token || r.body.encoded_root_token ? ([['Encoded Token', r.body.encoded_token || r.body.encoded_root_token]] as Array<[string, unknown]>) : [])]));
    },
  },
};

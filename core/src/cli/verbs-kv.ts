/**
 * `kv ...`: the KV engine through its mount's version (asked of
 * sys/internal/ui/mounts): v1 paths as given, v2 under data/, metadata/,
 * delete/, undelete/ and destroy/. Paths are `mount/key` or `-mount=M key`.
 */
import { parseData, UsageError } from './args.js';
import type { Client } from './client.js';
import { boolFlag, CliError, commaList, ensureOk, flag, printKeys, printResponse, trail, type Command, type Ctx } from './command.js';
import { keyValues } from './output.js';
import type { FlagSpec } from './args.js';

interface KvMount {
  mount: string;
  version: 1 | 2;
  /** The key inside the mount. */
  key: string;
}

const MOUNT_FLAG: FlagSpec = { mount: { kind: 'string', help: 'The KV mount; the path argument is then the key inside it.' } };

async function resolve(ctx: Ctx): Promise<KvMount> {
  const arg = ctx.args.positionals[0]!;
  const full = flag(ctx, 'mount') ? `${flag(ctx, 'mount')!.replace(/\/+$/, '')}/${arg.replace(/^\/+/, '')}` : arg.replace(/^\/+/, '');
  const r = await ctx.client.preflight(`sys/internal/ui/mounts/${full}`);
  if (r.status === 403) {
    // The server answers 403 both for a token it does not know and for a path outside every mount
    // the token may see: a bad token is said as permission denied, not as a missing mount.
    const self = await ctx.client.preflight('auth/token/lookup-self');
    if (self.status === 403) ensureOk(self, `reading ${full}`);
  }
  if (r.status === 403 || r.status === 404) throw new CliError(`Error: no KV mount found for ${full}`, 2);
  ensureOk(r, `detecting the KV version of ${full}`);
  const d = r.body.data as { path: string; options?: { version?: string } | null };
  return { mount: d.path, version: d.options?.version === '2' ? 2 : 1, key: full.slice(d.path.length).replace(/^\/+/, '') };
}

const p = (m: KvMount, kind: 'data' | 'metadata' | 'delete' | 'undelete' | 'destroy') => (m.version === 2 ? `${m.mount}${kind}/${m.key}` : `${m.mount}${m.key}`);

/** A directory path: its trailing slash. */
const dirOf = (path: string) => path.replace(/\/?$/, '/');

function needV2(m: KvMount, verb: string): void {
  if (m.version !== 2) throw new CliError(`${verb} is not supported on KV version 1 (mount ${m.mount})`, 2);
}

const versionsOf = (ctx: Ctx): number[] => {
  const v = commaList(ctx, 'versions').map(Number);
  if (!v.length || v.some((n) => !Number.isInteger(n) || n < 0)) throw new UsageError('-versions: one or more version numbers are required (e.g. -versions=1,2)');
  return v;
};

function printKvRead(ctx: Ctx, m: KvMount, r: Awaited<ReturnType<Client['read']>>): void {
  if (m.version === 1) return printResponse(ctx, r);
  const inner = (r.body?.data?.data ?? null) as Record<string, unknown> | null;
  if (ctx.field || ctx.format !== 'table') return printResponse(ctx, r, { data: inner });
  const meta = (r.body?.data?.metadata ?? {}) as Record<string, unknown>;
  ctx.out(`== Secret Path ==\n${m.mount}data/${m.key}\n`);
  ctx.out('======= Metadata =======');
  keyValues(ctx.out, Object.keys(meta).sort().map((k) => [k, meta[k]]));
  if (inner) {
    ctx.out('\n====== Data ======');
    keyValues(ctx.out, Object.keys(inner).sort().map((k) => [k, inner[k]]));
  }
}

export const kvVerbs: Record<string, Command> = {
  'kv get': {
    usage: '[options] KEY',
    synopsis: 'Read a KV secret (the latest version, or -version=N on KV v2).',
    flags: { ...MOUNT_FLAG, version: { kind: 'string', help: 'The version to read (KV v2). Default: the latest.' } },
    min: 1,
    max: 1,
    async run(ctx) {
      const m = await resolve(ctx);
      const version = flag(ctx, 'version');
      if (version !== undefined) needV2(m, '-version');
      const r = await ctx.client.read(p(m, 'data'), version ? { version } : undefined);
      if (r.status === 404) throw new CliError(`No value found at ${p(m, 'data')}`, 2);
      ensureOk(r, `reading ${p(m, 'data')}`);
      printKvRead(ctx, m, r);
    },
  },
  'kv put': {
    usage: '[options] KEY [DATA K=V...]',
    synopsis: 'Write a new version of a KV secret (replaces all its data).',
    flags: { ...MOUNT_FLAG, cas: { kind: 'string', help: 'Check-and-set: write only if the current version is this (0: only if absent). KV v2.' } },
    min: 2,
    async run(ctx) {
      const m = await resolve(ctx);
      const data = parseData(ctx.args.positionals.slice(1));
      const cas = flag(ctx, 'cas');
      if (cas !== undefined) needV2(m, '-cas');
      const body = m.version === 2 ? { data, ...(cas !== undefined ? { options: { cas: Number(cas) } } : {}) } : data;
      const r = await ctx.client.write(p(m, 'data'), body);
      ensureOk(r, `writing data to ${p(m, 'data')}`);
      printResponse(ctx, r, { fallback: `Success! Data written to: ${m.mount}${m.key}` });
    },
  },
  'kv patch': {
    usage: '[options] KEY [DATA K=V...]',
    synopsis: 'Change some keys of a KV v2 secret, keeping the others (a new version).',
    flags: {
      ...MOUNT_FLAG,
      cas: { kind: 'string', help: 'Check-and-set version.' },
      method: { kind: 'string', help: '"patch" (HTTP PATCH, the default) or "rw" (read, merge, write with check-and-set).' },
    },
    min: 2,
    async run(ctx) {
      const m = await resolve(ctx);
      needV2(m, 'kv patch');
      const data = parseData(ctx.args.positionals.slice(1));
      const method = flag(ctx, 'method') ?? 'patch';
      const cas = flag(ctx, 'cas');
      let r;
      if (method === 'patch') {
        r = await ctx.client.patch(p(m, 'data'), { data, ...(cas !== undefined ? { options: { cas: Number(cas) } } : {}) });
        if (r.status === 404) throw new CliError(`No value found at ${p(m, 'data')}`, 2);
      } else if (method === 'rw') {
        const cur = await ctx.client.read(p(m, 'data'));
        if (cur.status === 404) throw new CliError(`No value found at ${p(m, 'data')}`, 2);
        ensureOk(cur, `reading ${p(m, 'data')}`);
        const merged = { ...(cur.body.data.data ?? {}), ...data };
        for (const [k, v] of Object.entries(data)) if (v === null) delete merged[k];
        r = await ctx.client.write(p(m, 'data'), { data: merged, options: { cas: cas !== undefined ? Number(cas) : cur.body.data.metadata.version } });
      } else {
        throw new UsageError(`-method: unsupported "${method}" (patch or rw)`);
      }
      ensureOk(r, `patching ${p(m, 'data')}`);
      printResponse(ctx, r, { fallback: `Success! Data patched at: ${m.mount}${m.key}` });
    },
  },
  'kv list': {
    usage: '[options] PATH',
    synopsis: 'List the keys under a KV path (-recursive: every key below it, at any depth).',
    flags: { ...MOUNT_FLAG, recursive: { kind: 'bool', help: 'Every key below PATH at any depth, relative to it (a SCAN, paged).' } },
    min: 1,
    max: 1,
    async run(ctx) {
      const m = await resolve(ctx);
      if (boolFlag(ctx, 'recursive')) {
        const r = await ctx.client.scan(dirOf(p(m, 'metadata')));
        if (r.status === 404) throw new CliError(`No value found at ${p(m, 'metadata')}`, 2);
        ensureOk(r, `scanning ${p(m, 'metadata')}`);
        return printKeys(ctx, r.keys);
      }
      const r = await ctx.client.list(p(m, 'metadata'));
      if (r.status === 404) throw new CliError(`No value found at ${p(m, 'metadata')}`, 2);
      ensureOk(r, `listing ${p(m, 'metadata')}`);
      printKeys(ctx, (r.body?.data?.keys ?? []) as string[]);
    },
  },
  'kv delete': {
    usage: '[options] KEY',
    synopsis: 'Delete the latest version of a KV secret (recoverable with kv undelete), or -versions=N,M.',
    flags: { ...MOUNT_FLAG, versions: { kind: 'list', help: 'Versions to delete (KV v2), e.g. -versions=1,2.' } },
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const m = await resolve(ctx);
      let r;
      if (ctx.args.lists.has('versions')) {
        needV2(m, '-versions');
        r = await ctx.client.write(p(m, 'delete'), { versions: versionsOf(ctx) });
      } else {
        r = await ctx.client.delete(p(m, 'data'));
      }
      ensureOk(r, `deleting ${m.mount}${m.key}`);
      ctx.out(`Success! Data deleted (if it existed) at: ${m.mount}${m.key}`);
    },
  },
  'kv enable-versioning': {
    usage: '[options] MOUNT',
    synopsis: 'Turn a KV version 1 mount into version 2: each secret becomes version 1 of itself.',
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const mount = trail(ctx.args.positionals[0]!);
      const r = await ctx.client.write(`sys/mounts/${mount}tune`, { options: { version: '2' } });
      ensureOk(r, `tuning ${mount}`);
      ctx.out(`Success! Tuned the secrets engine at: ${mount}`);
    },
  },
  'kv undelete': versionsVerb('undelete', 'Restore deleted versions of a KV v2 secret.', 'restore', 'undeleting'),
  'kv destroy': versionsVerb('destroy', 'Destroy versions of a KV v2 secret for good (their data is removed).', 'destroy', 'destroying'),
  'kv move': relocateVerb('move', 'Move a KV v2 secret (every version, its metadata) to another path of the same mount, without reading it.'),
  'kv copy': relocateVerb('copy', 'Copy a KV v2 secret (every version, its metadata) to another path of the same mount, without reading it.'),
  'kv rollback': {
    usage: '-version=N [options] KEY',
    synopsis: 'Write version N of a KV v2 secret again as its newest version.',
    flags: { ...MOUNT_FLAG, version: { kind: 'string', help: 'The version to roll back to (required).' } },
    min: 1,
    max: 1,
    async run(ctx) {
      const version = Number(flag(ctx, 'version'));
      if (!Number.isInteger(version) || version <= 0) throw new UsageError('-version: a positive version number is required');
      const m = await resolve(ctx);
      needV2(m, 'kv rollback');
      const meta = await ctx.client.read(p(m, 'metadata'));
      if (meta.status === 404) throw new CliError(`No value found at ${p(m, 'metadata')}`, 2);
      ensureOk(meta, `reading ${p(m, 'metadata')}`);
      const v = meta.body.data.versions?.[String(version)];
      if (!v) throw new CliError(`Error: version ${version} does not exist at ${m.mount}${m.key}`, 2);
      if (v.destroyed || v.deletion_time) throw new CliError(`Error: version ${version} of ${m.mount}${m.key} is deleted or destroyed; undelete it first`, 2);
      const old = await ctx.client.read(p(m, 'data'), { version: String(version) });
      ensureOk(old, `reading version ${version}`);
      // Check-and-set on the version we looked at: a concurrent write makes the rollback fail, not vanish.
      const r = await ctx.client.write(p(m, 'data'), { data: old.body.data.data, options: { cas: meta.body.data.current_version } });
      ensureOk(r, `rolling back ${m.mount}${m.key}`);
      printResponse(ctx, r, { fallback: `Success! Rolled back to version ${version}` });
    },
  },
  'kv metadata get': {
    usage: '[options] KEY',
    synopsis: 'Read the metadata and version history of a KV v2 secret.',
    flags: MOUNT_FLAG,
    min: 1,
    max: 1,
    async run(ctx) {
      const m = await resolve(ctx);
      needV2(m, 'kv metadata');
      const r = await ctx.client.read(p(m, 'metadata'));
      if (r.status === 404) throw new CliError(`No value found at ${p(m, 'metadata')}`, 2);
      ensureOk(r, `reading ${p(m, 'metadata')}`);
      printResponse(ctx, r);
    },
  },
  'kv metadata put': {
    usage: '[options] KEY',
    synopsis: 'Set the settings of a KV v2 secret: versions kept, check-and-set, expiry, custom metadata.',
    flags: {
      ...MOUNT_FLAG,
      'max-versions': { kind: 'string', help: 'Versions kept (0: the mount default).' },
      'cas-required': { kind: 'bool', help: 'Every write must give -cas.' },
      'delete-version-after': { kind: 'string', help: 'Delete versions this long after they are written (e.g. 3h).' },
      'custom-metadata': { kind: 'list', help: 'A K=V pair of custom metadata.' },
    },
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const m = await resolve(ctx);
      needV2(m, 'kv metadata');
      const body: Record<string, unknown> = {};
      if (flag(ctx, 'max-versions') !== undefined) body.max_versions = Number(flag(ctx, 'max-versions'));
      if (flag(ctx, 'cas-required') !== undefined) body.cas_required = flag(ctx, 'cas-required') === 'true';
      if (flag(ctx, 'delete-version-after') !== undefined) body.delete_version_after = flag(ctx, 'delete-version-after');
      if (ctx.args.lists.has('custom-metadata')) body.custom_metadata = parseData(ctx.args.lists.get('custom-metadata')!);
      const r = await ctx.client.write(p(m, 'metadata'), body);
      ensureOk(r, `writing ${p(m, 'metadata')}`);
      ctx.out(`Success! Data written to: ${p(m, 'metadata')}`);
    },
  },
  'kv metadata delete': {
    usage: '[options] KEY',
    synopsis: 'Delete a KV v2 secret entirely: its metadata and every version.',
    flags: MOUNT_FLAG,
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const m = await resolve(ctx);
      needV2(m, 'kv metadata');
      const r = await ctx.client.delete(p(m, 'metadata'));
      ensureOk(r, `deleting ${p(m, 'metadata')}`);
      ctx.out(`Success! Data deleted (if it existed) at: ${p(m, 'metadata')}`);
    },
  },
};

/** `kv move` and `kv copy`: SRC and DST as `mount/key` (the same mount), or keys with -mount. */
function relocateVerb(endpoint: 'move' | 'copy', synopsis: string): Command {
  return {
    usage: '[options] SRC DST',
    synopsis,
    flags: { ...MOUNT_FLAG, overwrite: { kind: 'bool', help: 'Replace a secret already at DST.' } },
    output: false,
    min: 2,
    max: 2,
    async run(ctx) {
      const m = await resolve(ctx);
      needV2(m, `kv ${endpoint}`);
      const dst = ctx.args.positionals[1]!.replace(/^\/+/, '');
      // With -mount both are keys; otherwise DST names the same mount as SRC.
      const destination = flag(ctx, 'mount') ? dst : dst.startsWith(m.mount) ? dst.slice(m.mount.length) : null;
      if (destination === null) throw new CliError(`Error: ${dst} is not in the mount ${m.mount} (a secret moves or copies inside its mount)`, 1);
      const r = await ctx.client.write(`${m.mount}${endpoint}/${m.key}`, { destination, overwrite: boolFlag(ctx, 'overwrite') });
      ensureOk(r, `${endpoint === 'move' ? 'moving' : 'copying'} ${m.mount}${m.key}`);
      ctx.out(`Success! ${endpoint === 'move' ? 'Moved' : 'Copied'} ${m.mount}${m.key} to ${m.mount}${destination}`);
    },
  };
}

/** `kv undelete` and `kv destroy`: the same verb over the engine's `undelete/` or `destroy/` path. */
function versionsVerb(endpoint: 'undelete' | 'destroy', synopsis: string, what: string, doing: string): Command {
  return {
    usage: '-versions=N[,M] [options] KEY',
    synopsis,
    flags: { ...MOUNT_FLAG, versions: { kind: 'list', help: `Versions to ${what} (required).` } },
    output: false,
    min: 1,
    max: 1,
    async run(ctx) {
      const versions = versionsOf(ctx);
      const m = await resolve(ctx);
      needV2(m, `kv ${endpoint}`);
      const r = await ctx.client.put(p(m, endpoint), { versions });
      ensureOk(r, `${doing} ${m.mount}${m.key}`);
      ctx.out(`Success! Data written to: ${p(m, endpoint)}`);
    },
  };
}

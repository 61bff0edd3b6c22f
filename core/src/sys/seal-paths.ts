/**
 * The node-local sys/ paths: init, unseal, seal-status, health and the read of
 * leader. They answer while sealed and on an HA standby (never forwarded),
 * unauthenticated and flat (their body is the data itself, no response
 * envelope), as in Vault. They are declared with the same path framework as
 * the rest of sys/, so help and OpenAPI describe them; the core serves them
 * through `createNodeLocal` before any routing, and the root namespace's sys/
 * mount lists the same declarations.
 */
import { StrongroomError, badRequest, createMemoryStorage, defineBackend, f, type Backend } from '@strongroom/sdk-plugin/host';
import { defineSysPath, type SysPathDef } from './sys-path.js';
import type { LeaderStatus } from '../ha/leader.js';
import type { ApiReply, ApiRequest } from '../http/types.js';
import type { SealManager } from '../seal/seal-manager.js';

export interface NodeLocalDeps {
  seal: Pick<SealManager, 'status' | 'initialized' | 'submitUnsealKey'>;
  /** Initializes the seal and answers the keys with the first root token. */
  init(request: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** This node right now: sealed, and an unsealed HA standby. */
  node(): { sealed: boolean; standby: boolean };
  leader(): Promise<LeaderStatus>;
  clusterName: string;
  version: string;
}

function sealPaths(deps: NodeLocalDeps): SysPathDef[] {
  return [
    defineSysPath({
      rootOnly: true,
      pattern: 'init',
      unauthenticated: true,
      fields: {
        secret_shares: f.int({ min: 1, max: 255 }).optional().describe('Number of unseal key shares.'),
        secret_threshold: f.int({ min: 1, max: 255 }).optional().describe('Shares needed to unseal.'),
        recovery_shares: f.int({ min: 1, max: 255 }).optional().describe('With a static seal: number of recovery key shares.'),
        recovery_threshold: f.int({ min: 1, max: 255 }).optional().describe('With a static seal: recovery shares needed for generate-root, rekey, and unseal after a seal.'),
      },
      synopsis: 'Initialize the server (answers while sealed).',
      operations: {
        read: { summary: 'Whether the server is initialized.', handler: async () => ({ data: { initialized: await deps.seal.initialized() } }) },
        update: { summary: 'Initialize: returns the key shares and the first root token.', handler: async (req) => ({ data: await deps.init(req.raw.data) }) },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'unseal',
      unauthenticated: true,
      fields: {
        key: f.sensitive(f.string().optional().describe('One unseal key share (hex or base64).')),
        reset: f.bool().optional().describe('Discard the shares given so far.'),
        migrate: f.bool().optional().describe('Seal migration: the config\'s seal differs from the stored one (Shamir to static, or static to Shamir with the stanza disabled).'),
      },
      synopsis: 'Give one unseal key share, or with a static seal one recovery key share (answers while sealed).',
      operations: {
        update: {
          summary: 'Unseal progress.',
          handler: async (req) => {
            const d = req.raw.data as { key?: unknown; reset?: unknown; migrate?: unknown };
            const reset = d.reset === true || d.reset === 'true';
            if (!reset && (typeof d.key !== 'string' || d.key === '')) throw badRequest("key: missing required parameter 'key'");
            return { data: { ...(await deps.seal.submitUnsealKey(typeof d.key === 'string' ? d.key : undefined, { reset, migrate: d.migrate === true || d.migrate === 'true' })) } };
          },
        },
      },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'seal-status',
      unauthenticated: true,
      synopsis: 'Seal status (answers while sealed).',
      operations: { read: { summary: 'Seal status.', handler: async () => ({ data: { ...(await deps.seal.status()) } }) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'health',
      unauthenticated: true,
      fields: {
        standbyok: f.query(f.string().optional().describe('Any value but "false" or "0": a standby answers as active.')),
        activecode: f.query(f.string().optional().describe('HTTP status code for an active node (default 200).')),
        standbycode: f.query(f.string().optional().describe('HTTP status code for a standby (default 429).')),
        sealedcode: f.query(f.string().optional().describe('HTTP status code when sealed (default 503).')),
        uninitcode: f.query(f.string().optional().describe('HTTP status code when not initialized (default 501).')),
      },
      synopsis: 'Health of this node (answers while sealed).',
      operations: { read: { summary: 'Health; the status code tells the state.', handler: async (req) => health(deps, req.raw.data) } },
    }),
    defineSysPath({
      rootOnly: true,
      pattern: 'leader',
      unauthenticated: true,
      synopsis: 'The HA leader as this node sees it (answered by every node itself).',
      operations: {
        read: {
          summary: 'Leader status.',
          handler: async () => {
            if (deps.node().sealed) throw new StrongroomError('unavailable', 'Vault is sealed');
            return { data: { ...(await deps.leader()) } };
          },
        },
      },
    }),
  ];
}

async function health(deps: NodeLocalDeps, q: Record<string, unknown>) {
  const code = (name: string, dflt: number) => {
    const v = q[name];
    if (v === undefined || v === '') return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 100 || n > 599) throw badRequest(`${name}: must be an HTTP status code`);
    return n;
  };
  const initialized = await deps.seal.initialized();
  const { sealed, standby } = deps.node();
  const standbyOk = q.standbyok !== undefined && q.standbyok !== 'false' && q.standbyok !== '0';
  const status = !initialized ? code('uninitcode', 501) : sealed ? code('sealedcode', 503) : standby && !standbyOk ? code('standbycode', 429) : code('activecode', 200);
  const data = {
    initialized,
    sealed,
    standby,
    performance_standby: false,
    replication_performance_mode: 'disabled',
    replication_dr_mode: 'disabled',
    server_time_utc: Math.floor(Date.now() / 1000),
    version: deps.version,
    cluster_name: deps.clusterName,
    cluster_id: '',
  };
  return { status, data };
}

/** The node-local paths as served before routing: `handles` picks the requests, `serve` answers them flat. */
export interface NodeLocal {
  paths: SysPathDef[];
  handles(req: ApiRequest): boolean;
  /** init, unseal, seal-status and health (sys/leader is node-local for reads only). */
  sealPath(path: string): boolean;
  serve(req: ApiRequest): Promise<ApiReply>;
}

const SEAL_PATHS = new Set(['sys/health', 'sys/seal-status', 'sys/init', 'sys/unseal']);
const ROOT_SYS = { path: 'sys/', type: 'system', uuid: '', accessor: '', namespace: '', options: {}, isAuth: false };

export async function createNodeLocal(deps: NodeLocalDeps): Promise<NodeLocal> {
  const paths = sealPaths(deps);
  const unusable = () => Promise.reject(new StrongroomError('internal', 'the node-local paths have no system view'));
  const backend: Backend = await defineBackend({ type: 'secret', help: 'Node-local system paths.', paths }).create({
    mount: ROOT_SYS,
    storage: createMemoryStorage(),
    system: { defaultLeaseTtl: unusable, maxLeaseTtl: unusable, generatePasswordFromPolicy: unusable, coreVersion: unusable, sendEvent: unusable },
    logger: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  const bare = (path: string) => path.replace(/\/+$/, '');
  return {
    paths,
    // sys/leader is node-local for reads only; anything else on it is an ordinary request.
    handles: (req) => SEAL_PATHS.has(bare(req.path)) || (bare(req.path) === 'sys/leader' && req.operation === 'read'),
    sealPath: (path) => SEAL_PATHS.has(bare(path)),
    async serve(req) {
      const resp = await backend.handleRequest({
        id: req.id,
        operation: req.help ? 'help' : req.operation === 'write' ? 'update' : req.operation,
        path: bare(req.path).slice('sys/'.length),
        mount: ROOT_SYS,
        data: req.data,
        client: { remoteAddress: req.remoteAddress, displayName: '', tokenAccessor: '', entityId: '', policies: [], metadata: {} },
      });
      return { status: resp?.status ?? 200, body: resp?.data ?? {} };
    },
  };
}

/**
 * In-process test harness: one mount of an engine over in-memory storage, no
 * process and no core. It does what the core does around a request that
 * matters to an engine: a write asks the existence check whether it is a
 * create or an update, LIST paths carry a trailing slash, data and responses
 * go through a JSON round trip (as over the wire), and renew/revoke carry the
 * secret's internal data back.
 */
import type { Backend, BackendFactory } from './backend.js';
import { writeOperation as operationFor, type ClientInfo, type LogicalRequest, type LogicalResponse, type MountInfo, type Operation, type RequestAuth, type SecretRef } from './logical.js';
import { StrongroomError } from './errors.js';
import { createMemoryStorage, type Storage } from './storage.js';
import type { Logger, SystemView } from './system-view.js';

export interface TestBackendOptions {
  mount?: Partial<MountInfo>;
  storage?: Storage;
  system?: Partial<SystemView>;
  client?: Partial<ClientInfo>;
  logger?: Logger;
}

export interface TestRequest {
  operation: Operation;
  path: string;
  data?: Record<string, unknown>;
  client?: Partial<ClientInfo>;
  secret?: SecretRef;
  auth?: RequestAuth;
  headers?: Record<string, string>;
}

export interface TestBackend {
  backend: Backend;
  storage: Storage;
  mount: MountInfo;
  /** One request exactly as given (no existence check). */
  request(req: TestRequest): Promise<LogicalResponse | null>;
  read(path: string, query?: Record<string, unknown>): Promise<LogicalResponse | null>;
  /** A PUT/POST: the existence check decides create or update, as in the core. */
  write(path: string, data: Record<string, unknown>): Promise<LogicalResponse | null>;
  /** The operation a write to `path` would be sent as. */
  writeOperation(path: string, data?: Record<string, unknown>): Promise<'create' | 'update'>;
  list(path: string, opts?: { after?: string; limit?: number }): Promise<LogicalResponse | null>;
  delete(path: string, query?: Record<string, unknown>): Promise<LogicalResponse | null>;
  patch(path: string, data: Record<string, unknown>): Promise<LogicalResponse | null>;
  help(path: string): Promise<LogicalResponse | null>;
  /** Renews the secret of an earlier response. */
  renew(issued: LogicalResponse, opts?: { increment?: number; path?: string }): Promise<LogicalResponse | null>;
  /** Renews the token a login response would have become (its auth's internal data, metadata and policies). */
  renewAuth(login: LogicalResponse, opts?: { path?: string }): Promise<LogicalResponse | null>;
  /** Revokes the secret of an earlier response. */
  revoke(issued: LogicalResponse, opts?: { path?: string }): Promise<LogicalResponse | null>;
}

const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

const wire = <T>(v: T): T => (v === undefined || v === null ? v : (JSON.parse(JSON.stringify(v)) as T));

export async function createTestBackend(factory: BackendFactory, opts: TestBackendOptions = {}): Promise<TestBackend> {
  const mount: MountInfo = {
    path: 'test/',
    type: 'test',
    uuid: '00000000-0000-4000-8000-000000000000',
    accessor: 'test_00000000',
    namespace: '',
    options: {},
    isAuth: factory.type === 'auth',
    ...opts.mount,
  };
  const storage = opts.storage ?? createMemoryStorage();
  const system: SystemView = {
    defaultLeaseTtl: async () => 2764800,
    maxLeaseTtl: async () => 2764800,
    generatePasswordFromPolicy: async () => {
      throw new Error('no password policies in the test harness');
    },
    coreVersion: async () => '0.0.0-test',
    // Events go nowhere here unless the test passes its own sendEvent to look at them.
    sendEvent: async () => undefined,
    ...opts.system,
  };
  const backend = await factory.create({ mount, storage, system, logger: opts.logger ?? silentLogger });
  let nextId = 1;
  let nextLease = 1;

  const client = (c?: Partial<ClientInfo>): ClientInfo => ({
    remoteAddress: '127.0.0.1',
    displayName: 'root',
    tokenAccessor: 'test-accessor',
    entityId: '',
    policies: ['root'],
    metadata: {},
    ...opts.client,
    ...c,
  });

  const build = (req: TestRequest): LogicalRequest => {
    const lr: LogicalRequest = {
      id: `test-${nextId++}`,
      operation: req.operation,
      path: req.path,
      mount,
      data: wire(req.data ?? {}),
      client: client(req.client),
    };
    if (req.secret) lr.secret = wire(req.secret);
    if (req.auth) lr.auth = wire(req.auth);
    if (req.headers) lr.headers = req.headers;
    return lr;
  };

  const request = async (req: TestRequest) => wire(await backend.handleRequest(build(req)));

  const writeOperation = async (path: string, data: Record<string, unknown> = {}) => {
    return operationFor(await backend.existenceCheck(build({ operation: 'update', path, data })));
  };

  const secretRef = (issued: LogicalResponse, increment: number): SecretRef => {
    if (!issued.secret) throw new Error('response carries no secret');
    return {
      leaseId: `${mount.path}test/${nextLease++}`,
      secretType: issued.secret.type,
      internalData: issued.secret.internalData,
      ttl: issued.secret.ttl,
      increment,
      issueTime: Date.now(),
      lastRenewalTime: null,
    };
  };

  return {
    backend,
    storage,
    mount,
    request,
    read: (path, query) => request({ operation: 'read', path, data: query ?? {} }),
    write: async (path, data) => request({ operation: await writeOperation(path, data), path, data }),
    writeOperation,
    list: (path, o = {}) =>
      request({
        operation: 'list',
        path: path === '' || path.endsWith('/') ? path : `${path}/`,
        data: { ...(o.after !== undefined ? { after: o.after } : {}), ...(o.limit !== undefined ? { limit: o.limit } : {}) },
      }),
    delete: (path, query) => request({ operation: 'delete', path, data: query ?? {} }),
    patch: (path, data) => request({ operation: 'patch', path, data }),
    help: (path) => request({ operation: 'help', path }),
    renew: (issued, o = {}) => request({ operation: 'renew', path: o.path ?? '', secret: secretRef(issued, o.increment ?? 0) }),
    renewAuth: (login, o = {}) => {
      if (!login.auth) throw new Error('response carries no auth');
      const { internalData, metadata, policies } = login.auth;
      return request({ operation: 'renew', path: o.path ?? 'login', auth: { internalData, metadata, policies } });
    },
    revoke: (issued, o = {}) => request({ operation: 'revoke', path: o.path ?? '', secret: secretRef(issued, 0) }),
  };
}

/** For tests: the StrongroomError that `fn` throws; anything else thrown, or nothing, fails. */
export function errorOf(fn: () => unknown): StrongroomError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StrongroomError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

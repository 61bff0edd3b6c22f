/**
 * The storage fault injector: a wrapper that injects errors and latency, for
 * tests that must see how the core (lease registration, revocation retries)
 * or an engine (a batch cut short) behaves when storage fails. Deterministic by default: errors only where a rule asks for them.
 */
import type { Storage, StorageOp } from '../storage.js';

/** A Storage, or the core's physical store shape (which also scans). */
export interface FaultableStore extends Storage {
  scan?(prefix: string): AsyncIterable<{ key: string; value: Uint8Array }>;
  scanKeys?(prefix: string, range?: { after?: string; limit?: number }): AsyncIterable<string>;
}

export type StoreOperation = 'get' | 'put' | 'delete' | 'list' | 'scan' | 'batch';

export interface FaultOptions {
  /** Probability (0..1) that any operation fails. */
  errorRate?: number;
  /** Added to every operation, in milliseconds. */
  latencyMs?: number;
  /** Uniform random extra latency in [0, jitterMs). */
  jitterMs?: number;
  /** Fail operations this predicate selects (key is the first key of a batch, the prefix of list/scan). */
  failWhen?: (op: StoreOperation, key: string) => boolean;
  /** Random source, injectable for reproducible tests. */
  random?: () => number;
}

export interface FaultControl {
  /** Fail the next `count` operations (optionally only of type `op`). */
  failNext(count: number, op?: StoreOperation): void;
  set(options: FaultOptions): void;
  /** How many operations were failed on purpose. */
  readonly injected: number;
}

export class InjectedFaultError extends Error {
  constructor(op: StoreOperation, key: string) {
    super(`injected storage fault: ${op} ${key}`);
    this.name = 'InjectedFaultError';
  }
}

export function createFaultyStore<T extends FaultableStore>(inner: T, initial: FaultOptions = {}): T & { faults: FaultControl } {
  let options = { ...initial };
  let failCount = 0;
  let failOp: StoreOperation | undefined;
  let injected = 0;

  const maybeFail = async (op: StoreOperation, key: string): Promise<void> => {
    const random = options.random ?? Math.random;
    const delay = (options.latencyMs ?? 0) + (options.jitterMs ? random() * options.jitterMs : 0);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    let fail = false;
    if (failCount > 0 && (failOp === undefined || failOp === op)) {
      failCount--;
      fail = true;
    } else if (options.failWhen?.(op, key)) {
      fail = true;
    } else if (options.errorRate && random() < options.errorRate) {
      fail = true;
    }
    if (fail) {
      injected++;
      throw new InjectedFaultError(op, key);
    }
  };

  const faults: FaultControl = {
    failNext(count, op) {
      failCount = count;
      failOp = op;
    },
    set(next) {
      options = { ...next };
    },
    get injected() {
      return injected;
    },
  };

  const wrapped: FaultableStore = {
    async get(key) {
      await maybeFail('get', key);
      return inner.get(key);
    },
    async put(key, value) {
      await maybeFail('put', key);
      return inner.put(key, value);
    },
    async delete(key) {
      await maybeFail('delete', key);
      return inner.delete(key);
    },
    async list(prefix) {
      await maybeFail('list', prefix);
      return inner.list(prefix);
    },
    async listRecursive(prefix, page) {
      await maybeFail('scan', prefix);
      return inner.listRecursive(prefix, page);
    },
    async batch(ops: StorageOp[]) {
      await maybeFail('batch', ops[0]?.key ?? '');
      return inner.batch(ops);
    },
  };
  const scan = inner.scan?.bind(inner);
  if (scan) {
    wrapped.scan = async function* (prefix) {
      await maybeFail('scan', prefix);
      yield* scan(prefix);
    };
  }
  // A keys-only scan fails as a scan does.
  const scanKeys = inner.scanKeys?.bind(inner);
  if (scanKeys) {
    wrapped.scanKeys = async function* (prefix, range) {
      await maybeFail('scan', prefix);
      yield* scanKeys(prefix, range);
    };
  }
  // Methods beyond the store shape (close, stats, barrier controls) pass through.
  return Object.assign(Object.create(inner) as T, wrapped, { faults });
}

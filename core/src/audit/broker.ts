/**
 * Audit broker: every enabled device gets every request and response, written
 * in parallel with a per-device timeout. A request succeeds if at least one
 * device wrote it and fails if all failed (DESIGN.md section 5). Device
 * configs (with their HMAC salts) live in the barrier at `core/audit`.
 */
import { randomBytes } from 'node:crypto';
import { badRequest, StrongroomError } from '@strongroom/sdk-plugin/host';
import type { Physical } from '../storage/physical.js';
import type { CoreLogger } from '../log/logger.js';
import { AUDIT_DEVICE_TYPES, normalizeOptions, openDevice, type AuditDeviceType, type DeviceWriter } from './devices.js';
import { hashStructure, hmacValue } from './hash.js';

export interface AuditDeviceConfig {
  path: string;
  type: AuditDeviceType;
  description: string;
  options: Record<string, string>;
  local: boolean;
  /** hex; the device's HMAC key. */
  salt: string;
}

export interface AuditAuth {
  client_token: string;
  accessor: string;
  display_name: string;
  policies: string[];
  token_policies: string[];
  metadata: Record<string, string>;
  entity_id: string;
  token_type: string;
  token_ttl: number;
}

export interface AuditRequest {
  id: string;
  operation: string;
  path: string;
  mount_type: string;
  mount_accessor: string;
  namespace: { id: string; path: string };
  remote_address: string;
  client_token: string;
  client_token_accessor: string;
  data: Record<string, unknown> | null;
}

export interface AuditResponse {
  mount_type: string;
  data: Record<string, unknown> | null;
  secret: { lease_id: string } | null;
  auth: AuditAuth | null;
  warnings: string[] | null;
  status: number;
  /** A wrapped response: the wrapping token (HMAC'd like every token), never the wrapped data. */
  wrap_info?: { token: string; accessor: string; ttl: number; creation_time: string; creation_path: string; wrapped_accessor?: string };
}

export interface AuditEntry {
  auth: AuditAuth | null;
  request: AuditRequest;
  response?: AuditResponse;
  error?: string;
  nonHmacRequestKeys?: string[];
  nonHmacResponseKeys?: string[];
}

interface Device extends DeviceWriter {
  config: AuditDeviceConfig;
  salt: Buffer;
}

const STORE_KEY = 'core/audit';

export interface AuditBroker {
  enable(path: string, type: string, options: Record<string, string>, description: string, local: boolean): Promise<void>;
  disable(path: string): Promise<void>;
  list(): AuditDeviceConfig[];
  hash(path: string, input: string): string;
  logRequest(e: AuditEntry): Promise<void>;
  logResponse(e: AuditEntry): Promise<void>;
  /** Load devices after unseal. */
  load(): Promise<void>;
  close(): Promise<void>;
  readonly enabled: boolean;
}

export function createAuditBroker(deps: { store: Pick<Physical, 'get' | 'put'>; logger: CoreLogger; timeoutMs?: number; onDeviceFailure?: (path: string, kind: 'request' | 'response') => void }): AuditBroker {
  const devices = new Map<string, Device>();
  const timeoutMs = deps.timeoutMs ?? 5000;

  async function persist() {
    const configs = [...devices.values()].map((d) => d.config);
    await deps.store.put(STORE_KEY, Buffer.from(JSON.stringify({ devices: configs })));
  }

  async function write(kind: 'request' | 'response', e: AuditEntry) {
    if (devices.size === 0) return;
    const time = new Date().toISOString();
    const list = [...devices.values()];
    const results = await Promise.allSettled(list.map((d) => withTimeout(d.write(render(kind, time, e, d.salt)), d.timeoutMs ?? timeoutMs, () => d.reset?.())));
    const failed = results.filter((r) => r.status === 'rejected');
    results.forEach((r, i) => {
      if (r.status !== 'rejected') return;
      deps.logger.error('audit device failed', { path: list[i]!.config.path, type: list[i]!.config.type, error: String(r.reason) });
      deps.onDeviceFailure?.(list[i]!.config.path, kind);
    });
    if (failed.length === results.length) {
      throw new StrongroomError('internal', 'audit: every enabled audit device failed to log the request');
    }
  }

  return {
    get enabled() {
      return devices.size > 0;
    },
    async enable(rawPath, type, options, description, local) {
      const path = rawPath.endsWith('/') ? rawPath : `${rawPath}/`;
      if (devices.has(path)) throw badRequest(`path: an audit device is already enabled at "${path}"`);
      if (!isDeviceType(type)) throw badRequest(`type: unsupported audit device type "${type}" (supported: ${AUDIT_DEVICE_TYPES.join(', ')})`);
      const config: AuditDeviceConfig = { path, type, description, options: normalizeOptions(type, options), local, salt: randomBytes(32).toString('hex') };
      const device = await openConfigured(config);
      devices.set(path, device);
      try {
        await persist();
      } catch (err) {
        devices.delete(path);
        await device.close();
        throw err;
      }
    },
    async disable(rawPath) {
      const path = rawPath.endsWith('/') ? rawPath : `${rawPath}/`;
      const d = devices.get(path);
      if (!d) return;
      devices.delete(path);
      await persist();
      await d.close();
    },
    list: () => [...devices.values()].map((d) => d.config),
    hash(rawPath, input) {
      const path = rawPath.endsWith('/') ? rawPath : `${rawPath}/`;
      const d = devices.get(path);
      // Vault's text, which clients match: "unknown audit backend".
      if (!d) throw badRequest(`path: unknown audit backend: no audit device enabled at "${path}"`);
      return hmacValue(d.salt, input);
    },
    logRequest: (e) => write('request', e),
    logResponse: (e) => write('response', e),
    async load() {
      const raw = await deps.store.get(STORE_KEY);
      if (!raw) return;
      const { devices: configs } = JSON.parse(Buffer.from(raw).toString('utf8')) as { devices: AuditDeviceConfig[] };
      for (const c of configs) {
        try {
          devices.set(c.path, await openConfigured(c));
        } catch (err) {
          deps.logger.error('failed to open audit device', { path: c.path, error: String(err) });
        }
      }
    },
    async close() {
      const all = [...devices.values()];
      devices.clear();
      await Promise.allSettled(all.map((d) => d.close()));
    },
  };
}

function render(kind: 'request' | 'response', time: string, e: AuditEntry, salt: Buffer): string {
  const reqKeys = new Set(e.nonHmacRequestKeys ?? []);
  const resKeys = new Set(e.nonHmacResponseKeys ?? []);
  const out: Record<string, unknown> = {
    time,
    type: kind,
    auth: e.auth ? hashAuth(salt, e.auth) : null,
    request: {
      ...e.request,
      client_token: e.request.client_token ? hmacValue(salt, e.request.client_token) : '',
      client_token_accessor: e.request.client_token_accessor ? hmacValue(salt, e.request.client_token_accessor) : '',
      data: e.request.data ? hashStructure(salt, e.request.data, reqKeys) : null,
    },
  };
  if (kind === 'response' && e.response) {
    out.response = {
      ...e.response,
      data: e.response.data ? hashStructure(salt, e.response.data, resKeys) : null,
      auth: e.response.auth ? hashAuth(salt, e.response.auth) : null,
      ...(e.response.wrap_info ? { wrap_info: hashWrapInfo(salt, e.response.wrap_info) } : {}),
    };
  }
  if (e.error) out.error = e.error;
  return `${JSON.stringify(out)}\n`;
}

function hashWrapInfo(salt: Buffer, w: NonNullable<AuditResponse['wrap_info']>): NonNullable<AuditResponse['wrap_info']> {
  return {
    ...w,
    token: hmacValue(salt, w.token),
    accessor: w.accessor ? hmacValue(salt, w.accessor) : '',
    ...(w.wrapped_accessor ? { wrapped_accessor: hmacValue(salt, w.wrapped_accessor) } : {}),
  };
}

function hashAuth(salt: Buffer, a: AuditAuth): AuditAuth {
  return {
    ...a,
    client_token: a.client_token ? hmacValue(salt, a.client_token) : '',
    accessor: a.accessor ? hmacValue(salt, a.accessor) : '',
    metadata: a.metadata,
  };
}

const isDeviceType = (t: string): t is AuditDeviceType => (AUDIT_DEVICE_TYPES as readonly string[]).includes(t);

async function openConfigured(config: AuditDeviceConfig): Promise<Device> {
  const writer = await openDevice(config.type ?? 'file', config.options);
  return Object.assign(writer, { config, salt: Buffer.from(config.salt, 'hex') });
}

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, reject) => {
      t = setTimeout(() => {
        onTimeout();
        reject(new Error(`audit device timed out after ${ms} ms`));
      }, ms);
    }),
  ]);
}

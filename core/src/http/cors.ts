/**
 * Cross-origin requests, as Vault's sys/config/cors sets them up. Off by
 * default. When on, a request that carries an `Origin` header:
 * - from an origin that is not allowed gets 403 and reaches nothing;
 * - as a preflight (OPTIONS) gets 204 with the allowed methods and headers;
 * - otherwise is served, and the answer names the origin (with Vary: Origin).
 * Requests without `Origin` (every non-browser client) are untouched.
 */
import type { ApiReply } from './types.js';

/** Headers a browser may always send cross-origin; `allowed_headers` adds to them. */
export const STD_ALLOWED_HEADERS: readonly string[] = [
  'Content-Type',
  'X-Requested-With',
  'X-Vault-No-Request-Forwarding',
  'X-Vault-Wrap-Format',
  'X-Vault-Wrap-TTL',
  'X-Vault-Policy-Override',
  'Authorization',
  'X-Vault-Token',
  'X-Vault-Namespace',
  'X-Vault-Request',
  'X-Service-Token',
  'X-Service-Namespace',
  'X-Service-Wrap-TTL',
  'X-Service-Request',
];

const ALLOWED_METHODS = 'DELETE, GET, OPTIONS, POST, PUT, PATCH, LIST';
const PREFLIGHT_MAX_AGE_S = '300';

export interface CorsConfig {
  enabled: boolean;
  allowed_origins: string[];
  allowed_headers: string[];
}

/** What to do with one request: answer it here, or serve it and add these headers. */
export type CorsVerdict = { answer: ApiReply } | { headers: Record<string, string> };

export interface Cors {
  config(): CorsConfig;
  set(config: CorsConfig): void;
  /** null: CORS is off or the request has no Origin; serve it as it is. */
  verdict(method: string, origin: string | undefined): CorsVerdict | null;
}

export const CORS_DISABLED: CorsConfig = { enabled: false, allowed_origins: [], allowed_headers: [] };

/** The stored form of a new configuration: the standard headers first, then the caller's, each once (case-insensitively). */
export function corsConfigOf(origins: string[], extraHeaders: string[]): CorsConfig {
  const headers: string[] = [];
  const seen = new Set<string>();
  for (const h of [...STD_ALLOWED_HEADERS, ...extraHeaders]) {
    if (seen.has(h.toLowerCase())) continue;
    seen.add(h.toLowerCase());
    headers.push(h);
  }
  return { enabled: true, allowed_origins: [...new Set(origins)], allowed_headers: headers };
}

export function createCors(): Cors {
  let current: CorsConfig = CORS_DISABLED;
  return {
    config: () => ({ ...current, allowed_origins: [...current.allowed_origins], allowed_headers: [...current.allowed_headers] }),
    set(config) {
      current = config;
    },
    verdict(method, origin) {
      const c = current;
      if (!c.enabled || origin === undefined || origin === '') return null;
      const allowed = c.allowed_origins.includes('*') || c.allowed_origins.includes(origin);
      if (!allowed) return { answer: { status: 403, body: { errors: ['origin not allowed'] } } };
      const headers: Record<string, string> = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
      if (method === 'OPTIONS') {
        return {
          answer: {
            status: 204,
            headers: { ...headers, 'Access-Control-Allow-Methods': ALLOWED_METHODS, 'Access-Control-Allow-Headers': c.allowed_headers.join(','), 'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_S },
          },
        };
      }
      return { headers };
    },
  };
}

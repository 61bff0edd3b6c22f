/**
 * The start-up handshake between the core and a plugin process (go-plugin's
 * shape): the core sets the variables below, the plugin prints exactly one
 * line `1|<protocol>|unix|<socket-path>|grpc` on stdout when it serves.
 *
 * The magic cookie is a usability check (someone running a plugin by hand gets
 * a clear message), not a security boundary. The per-process secret is: the
 * plugin sends it with every call back into the core, and the core sends it
 * with every call into the plugin; each side compares it in constant time.
 */
import { timingSafeEqual } from 'node:crypto';

export const ENV_MAGIC_COOKIE = 'STRONGROOM_PLUGIN_MAGIC_COOKIE';
export const MAGIC_COOKIE_VALUE = '3b1f7c2e-strongroom-plugin-5d8a9e40c6f1';
export const ENV_PROTOCOL_VERSIONS = 'STRONGROOM_PLUGIN_PROTOCOL_VERSIONS';
export const ENV_SOCKET_DIR = 'STRONGROOM_PLUGIN_SOCKET_DIR';
export const ENV_CALLBACK = 'STRONGROOM_PLUGIN_CALLBACK';
export const ENV_SECRET = 'STRONGROOM_PLUGIN_SECRET';

export const CORE_PROTOCOL_VERSION = 1;
export const APP_PROTOCOL_VERSION = 1;
export const SECRET_METADATA_KEY = 'x-strongroom-plugin-secret';
export const PLUGIN_SOCKET_NAME = 'plugin.sock';
export const CALLBACK_SOCKET_NAME = 'core.sock';
/** The name the plugin's health service reports SERVING for (besides ""). */
export const HEALTH_SERVICE_NAME = 'plugin';

export interface HandshakeLine {
  coreProtocol: number;
  appProtocol: number;
  network: 'unix';
  address: string;
  protocol: 'grpc';
}

export function formatHandshakeLine(socketPath: string): string {
  return `${CORE_PROTOCOL_VERSION}|${APP_PROTOCOL_VERSION}|unix|${socketPath}|grpc`;
}

/** Parses the handshake line; throws with the offending text on anything unexpected. */
export function parseHandshakeLine(line: string, acceptedAppProtocols: number[] = [APP_PROTOCOL_VERSION]): HandshakeLine {
  const parts = line.trim().split('|');
  const [core, app, network, address, protocol] = parts;
  if (parts.length < 5 || core !== String(CORE_PROTOCOL_VERSION) || network !== 'unix' || protocol !== 'grpc' || !address) {
    throw new Error(`unexpected handshake line: ${JSON.stringify(line.slice(0, 200))}`);
  }
  const appProtocol = Number(app);
  if (!acceptedAppProtocols.includes(appProtocol)) {
    throw new Error(`plugin speaks protocol ${app}, core accepts ${acceptedAppProtocols.join(',')}`);
  }
  return { coreProtocol: CORE_PROTOCOL_VERSION, appProtocol, network: 'unix', address, protocol: 'grpc' };
}

/** Constant-time check of a presented secret against the expected one. */
export function secretMatches(expected: Buffer, presented: unknown): boolean {
  if (typeof presented !== 'string' && !Buffer.isBuffer(presented)) return false;
  const got = Buffer.isBuffer(presented) ? presented : Buffer.from(presented, 'utf8');
  // Lengths differ only for a wrong secret; compare against itself to keep the time flat.
  if (got.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, got);
}

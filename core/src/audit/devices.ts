/**
 * The audit device types: `file` (a path, `stdout` or `discard`), `socket`
 * (TCP, UDP or a unix stream socket) and `syslog`. A device writes one JSON
 * line per entry (already HMAC'd by the broker); it never sees plain secrets.
 * Options are validated when the device is enabled, so a bad one is a 400
 * naming the option rather than a failure on the first request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { connect, type Socket } from 'node:net';
import { badRequest, FieldParseError, parseDurationMs } from '@strongroom/sdk-plugin/host';

export const AUDIT_DEVICE_TYPES = ['file', 'socket', 'syslog'] as const;
export type AuditDeviceType = (typeof AUDIT_DEVICE_TYPES)[number];

export interface DeviceWriter {
  write(line: string): Promise<void>;
  close(): Promise<void>;
  /** This device's own write deadline in ms (socket `write_timeout`); the broker's default otherwise. */
  timeoutMs?: number;
  /** Called when a write timed out: drop the stalled connection so the next write starts afresh. */
  reset?(): void;
}

/** Checks and completes a device's options (defaults filled in) before it is stored. */
export function normalizeOptions(type: AuditDeviceType, options: Record<string, string>): Record<string, string> {
  switch (type) {
    case 'file': {
      const filePath = options.file_path ?? options.path;
      if (!filePath) throw badRequest('options.file_path: required for a file audit device');
      return { ...options, file_path: filePath };
    }
    case 'socket': {
      const out: Record<string, string> = { socket_type: 'tcp', write_timeout: '2s', ...options };
      if (!out.address) throw badRequest('options.address: required for a socket audit device (e.g. 127.0.0.1:9090 or /run/audit.sock)');
      if (!['tcp', 'udp', 'unix'].includes(out.socket_type!)) throw badRequest(`options.socket_type: "${out.socket_type}" is not one of tcp, udp, unix`);
      if (out.socket_type !== 'unix') hostPort(out.address, 'options.address');
      writeTimeoutMs(out.write_timeout!);
      return out;
    }
    case 'syslog': {
      const out: Record<string, string> = { facility: 'AUTH', tag: 'strongroom', ...options };
      if (!SYSLOG_FACILITIES.includes(out.facility!.toLowerCase())) throw badRequest(`options.facility: "${out.facility}" is not a syslog facility (${SYSLOG_FACILITIES.join(', ')})`);
      if (!/^[\x21-\x7e]{1,48}$/.test(out.tag!)) throw badRequest('options.tag: 1 to 48 printable characters without spaces');
      if (out.address !== undefined) syslogTarget(out.address);
      else if (!localSyslogSocket()) throw badRequest(`options.address: no local syslog socket (${LOCAL_SYSLOG_SOCKETS.join(', ')}) on this host; set address to udp://host:port, tcp://host:port or a unix socket path`);
      return out;
    }
  }
}

export async function openDevice(type: AuditDeviceType, options: Record<string, string>): Promise<DeviceWriter> {
  if (type === 'socket') return openSocketDevice(options);
  if (type === 'syslog') return openSyslogDevice(options);
  return openFileDevice(options.file_path!);
}

async function openFileDevice(filePath: string): Promise<DeviceWriter> {
  if (filePath === 'discard') return { write: async () => undefined, close: async () => undefined };
  let stream: WriteStream | NodeJS.WriteStream;
  if (filePath === 'stdout') {
    stream = process.stdout;
  } else {
    const ws = createWriteStream(filePath, { flags: 'a', mode: 0o600 });
    try {
      await Promise.race([once(ws, 'open'), once(ws, 'error').then(([err]) => Promise.reject(err as Error))]);
    } catch (err) {
      // The operator's mistake (a missing directory, no permission), not the server's: a 400 naming the path.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw badRequest(`options.file_path: cannot open "${filePath}": the directory "${dirname(filePath)}" does not exist`);
      if (code === 'EACCES' || code === 'EISDIR' || code === 'ENOTDIR' || code === 'EROFS') throw badRequest(`options.file_path: cannot open "${filePath}" for writing (${code})`);
      throw err;
    }
    stream = ws;
  }
  return {
    write: (line) => new Promise<void>((resolve, reject) => stream.write(line, (err) => (err ? reject(err) : resolve()))),
    close: async () => {
      if (stream !== process.stdout) await new Promise<void>((r) => (stream as WriteStream).end(r));
    },
  };
}

function writeTimeoutMs(v: string): number {
  try {
    const ms = parseDurationMs(v);
    if (ms > 0) return ms;
  } catch (err) {
    if (!(err instanceof FieldParseError)) throw err;
  }
  throw badRequest(`options.write_timeout: "${v}" is not a positive duration (e.g. "2s")`);
}

function hostPort(address: string, field: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(address);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !m[1] || port < 1 || port > 65535) throw badRequest(`${field}: "${address}" is not host:port`);
  return { host: m[1], port };
}

/**
 * Connects lazily and keeps one connection; a write that fails or times out
 * drops it and the next write reconnects (as Vault's socket device does, an
 * entry in flight on a broken connection may be lost).
 */
function openSocketDevice(options: Record<string, string>): DeviceWriter {
  const type = options.socket_type as 'tcp' | 'udp' | 'unix';
  const address = options.address!;
  const timeoutMs = writeTimeoutMs(options.write_timeout!);
  if (type === 'udp') {
    const { host, port } = hostPort(address, 'options.address');
    let udp: UdpSocket | null = null;
    return {
      timeoutMs,
      write: (line) =>
        new Promise<void>((resolve, reject) => {
          udp ??= createSocket(host.includes(':') ? 'udp6' : 'udp4').on('error', () => undefined);
          udp.send(line, port, host, (err) => (err ? reject(err) : resolve()));
        }),
      close: async () => {
        udp?.close();
      },
    };
  }
  let sock: Socket | null = null;
  const drop = () => {
    sock?.destroy();
    sock = null;
  };
  const open = (): Socket => {
    const s = type === 'unix' ? connect(address) : connect(hostPort(address, 'options.address'));
    // A failed connection fails the pending write through its callback; later writes reconnect.
    s.on('error', () => {
      if (sock === s) sock = null;
    });
    s.on('close', () => {
      if (sock === s) sock = null;
    });
    return s;
  };
  return {
    timeoutMs,
    write: (line) =>
      new Promise<void>((resolve, reject) => {
        const s = (sock ??= open());
        const onError = (err: Error) => reject(err);
        s.once('error', onError);
        s.write(line, (err) => {
          s.off('error', onError);
          if (err) reject(err);
          else resolve();
        });
      }),
    reset: drop,
    close: async () => {
      const s = sock;
      sock = null;
      if (s && !s.destroyed) await new Promise<void>((r) => s.end(r));
    },
  };
}

const SYSLOG_FACILITIES = ['kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv', 'ftp', 'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7'];
const LOCAL_SYSLOG_SOCKETS = ['/dev/log', '/var/run/syslog', '/var/run/log'];
const localSyslogSocket = (): string | undefined => LOCAL_SYSLOG_SOCKETS.find((p) => existsSync(p));

/** logger(1)'s arguments for an `address`: udp://host:port, tcp://host:port, or a unix socket path. */
function syslogTarget(address: string): string[] {
  const net = /^(udp|tcp):\/\/(.+)$/.exec(address);
  if (net) {
    const { host, port } = hostPort(net[2]!, 'options.address');
    return net[1] === 'udp' ? ['--udp', '--rfc3164', '-n', host, '-P', String(port)] : ['--tcp', '--octet-count', '--rfc3164', '-n', host, '-P', String(port)];
  }
  const path = address.replace(/^unix:\/\//, '');
  if (!path.startsWith('/')) throw badRequest(`options.address: "${address}" is not udp://host:port, tcp://host:port or an absolute unix socket path`);
  return ['-u', path];
}

/**
 * Vault's syslog device sends to the local agent; so does this one, unless an
 * `address` names another target. Node cannot open the unix datagram socket
 * syslog daemons listen on, so one long-lived logger(1) process per device
 * carries the lines (one entry per line); it also handles stream sockets and
 * remote UDP/TCP. The process gets only already-hashed entries on its stdin.
 */
function openSyslogDevice(options: Record<string, string>): DeviceWriter {
  const target = options.address !== undefined ? syslogTarget(options.address) : ['-u', localSyslogSocket() ?? LOCAL_SYSLOG_SOCKETS[0]!];
  const args = ['--socket-errors=on', '-t', options.tag!, '-p', `${options.facility!.toLowerCase()}.info`, '--size', String(1 << 20), ...target];
  let child: ChildProcess | null = null;
  let lastError = '';
  const start = (): ChildProcess => {
    const c = spawn('logger', args, { stdio: ['pipe', 'ignore', 'pipe'] });
    c.stderr!.on('data', (d: Buffer) => (lastError = d.toString().trim().slice(0, 300)));
    c.stdin!.on('error', () => undefined);
    c.on('error', (err) => (lastError = String(err)));
    c.on('exit', () => {
      if (child === c) child = null;
    });
    return c;
  };
  return {
    write: (line) =>
      new Promise<void>((resolve, reject) => {
        const c = (child ??= start());
        if (!c.stdin!.writable) return reject(new Error(`syslog: logger is not running${lastError ? `: ${lastError}` : ''}`));
        c.stdin!.write(line, (err) => (err ? reject(new Error(`syslog: ${lastError || err.message}`)) : resolve()));
      }),
    reset: () => {
      child?.kill();
      child = null;
    },
    close: async () => {
      const c = child;
      child = null;
      if (!c || c.exitCode !== null) return;
      const exited = once(c, 'exit');
      c.stdin!.end();
      await exited;
    },
  };
}

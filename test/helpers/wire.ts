/**
 * Raw HTTP/1.1 over a socket, for tests that must control the exact bytes
 * (the LIST verb, pipelining, keep-alive) instead of trusting a client library.
 */
import type { Socket } from 'node:net';

export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `bytes` on `socket` and resolves with the first `count` responses (each must carry a Content-Length or be a 204). */
export function exchange(socket: Socket, bytes: string | Buffer, count: number): Promise<WireResponse[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const got: WireResponse[] = [];
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) break;
        const lines = buf.toString('latin1', 0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const c = line.indexOf(':');
          headers[line.slice(0, c).toLowerCase()] = line.slice(c + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (buf.length < end + 4 + length) break;
        got.push({ status: Number(lines[0]!.split(' ')[1]), headers, body: buf.toString('utf8', end + 4, end + 4 + length) });
        buf = buf.subarray(end + 4 + length);
      }
      if (got.length >= count) {
        socket.off('data', onData);
        socket.off('error', reject);
        resolve(got);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(bytes);
  });
}

import * as net from 'node:net';
import { createListVerbTranslator, LIST_MARKER_HEADER, SCAN_MARKER_HEADER, wrapConnection } from './list-method.js';

/** Feeds `input` split at the given sizes (cycled) and returns the concatenated output. */
function run(input: string, splits: number[] = [input.length]): { out: string; passthrough: boolean; copies: number } {
  const t = createListVerbTranslator();
  const buf = Buffer.from(input, 'latin1');
  const pieces: Buffer[] = [];
  let pos = 0;
  let i = 0;
  while (pos < buf.length) {
    const size = Math.max(1, splits[i % splits.length] as number);
    pieces.push(...t.push(buf.subarray(pos, pos + size)));
    pos += size;
    i += 1;
  }
  return { out: Buffer.concat(pieces).toString('latin1'), passthrough: t.passthrough, copies: pieces.length };
}

const marker = `${LIST_MARKER_HEADER}: 1\r\n`;

describe('LIST verb translator', () => {
  it('rewrites a LIST request line to GET and inserts the marker header', () => {
    const { out } = run('LIST /v1/secret/ HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(out).toBe(`GET /v1/secret/ HTTP/1.1\r\n${marker}Host: x\r\n\r\n`);
  });

  it('passes a non-LIST request through as the very same buffer (no copy)', () => {
    const t = createListVerbTranslator();
    const input = Buffer.from('GET /v1/a HTTP/1.1\r\nHost: x\r\n\r\n');
    const out = t.push(input);
    expect(out).toHaveLength(1);
    expect(out[0]).toBe(input);
  });

  it('strips a client-sent marker header, whatever its case', () => {
    const { out } = run('GET /v1/a HTTP/1.1\r\nHost: x\r\nX-Strongroom-List-Verb: 1\r\nAccept: */*\r\n\r\n');
    expect(out).toBe('GET /v1/a HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n');
    const list = run(`LIST /v1/a HTTP/1.1\r\n${LIST_MARKER_HEADER}: 0\r\nHost: x\r\n\r\n`);
    expect(list.out).toBe(`GET /v1/a HTTP/1.1\r\n${marker}Host: x\r\n\r\n`);
  });

  it('rewrites SCAN to GET with its own marker, and strips a client-sent SCAN marker', () => {
    const scanMarker = `${SCAN_MARKER_HEADER}: 1\r\n`;
    expect(run('SCAN /v1/secret/metadata/ HTTP/1.1\r\nHost: x\r\n\r\n', [3]).out).toBe(`GET /v1/secret/metadata/ HTTP/1.1\r\n${scanMarker}Host: x\r\n\r\n`);
    expect(run(`GET /v1/a HTTP/1.1\r\n${SCAN_MARKER_HEADER}: 1\r\nHost: x\r\n\r\n`).out).toBe('GET /v1/a HTTP/1.1\r\nHost: x\r\n\r\n');
  });

  it('does not touch a Content-Length body that contains a LIST request line', () => {
    const body = 'LIST /v1/evil HTTP/1.1\r\n\r\n';
    const input = `POST /v1/a HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}LIST /v1/b HTTP/1.1\r\n\r\n`;
    const expected = `POST /v1/a HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}GET /v1/b HTTP/1.1\r\n${marker}\r\n`;
    for (const splits of [[input.length], [1], [2, 3, 5], [7], [40, 1]]) {
      expect(run(input, splits).out).toBe(expected);
    }
  });

  it('tracks chunked bodies (extensions, trailers) whose data contains "LIST /x"', () => {
    const input =
      'POST /v1/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '7;ext=1\r\nLIST /x\r\n' +
      '1A\r\n' + 'LIST /y HTTP/1.1\r\n\r\nabcdef' + '\r\n' +
      '0\r\nX-Trailer: LIST /z\r\n\r\n' +
      'LIST /v1/after HTTP/1.1\r\n\r\n';
    const expected = input.replace('LIST /v1/after', 'GET /v1/after');
    const want = expected.slice(0, expected.lastIndexOf('\r\n')) + marker + '\r\n';
    for (const splits of [[input.length], [1], [3, 1, 4, 1, 5, 9, 2, 6], [11]]) {
      const r = run(input, splits);
      expect(r.out).toBe(want);
      expect(r.passthrough).toBe(false);
    }
  });

  it('handles pipelined requests split byte by byte', () => {
    const input =
      'GET /v1/one HTTP/1.1\r\n\r\n' +
      'LIST /v1/two HTTP/1.1\r\nHost: h\r\n\r\n' +
      'POST /v1/three HTTP/1.1\r\nContent-Length: 5\r\n\r\nLIST ' +
      'LIST /v1/four?x=1 HTTP/1.1\r\n\r\n';
    const expected =
      'GET /v1/one HTTP/1.1\r\n\r\n' +
      `GET /v1/two HTTP/1.1\r\n${marker}Host: h\r\n\r\n` +
      'POST /v1/three HTTP/1.1\r\nContent-Length: 5\r\n\r\nLIST ' +
      `GET /v1/four?x=1 HTTP/1.1\r\n${marker}\r\n`;
    expect(run(input, [1]).out).toBe(expected);
    expect(run(input).out).toBe(expected);
  });

  it('recognises a blank CRLF line split across packets and leading blank lines', () => {
    const input = '\r\nLIST /v1/a HTTP/1.1\r\nHost: x\r\n\r\nLIST /v1/b HTTP/1.1\r\n\r\n';
    const expected = `\r\nGET /v1/a HTTP/1.1\r\n${marker}Host: x\r\n\r\nGET /v1/b HTTP/1.1\r\n${marker}\r\n`;
    for (const splits of [[1], [2], [3], [33, 1]]) expect(run(input, splits).out).toBe(expected);
  });

  it('gives up framing (passes bytes through untouched) on ambiguous framing', () => {
    const both = 'POST /v1/a HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabcLIST /v1/b HTTP/1.1\r\n\r\n';
    expect(run(both)).toMatchObject({ out: both, passthrough: true });
    const twice = 'POST /v1/a HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabcLIST /v1/b HTTP/1.1\r\n\r\n';
    expect(run(twice)).toMatchObject({ out: twice, passthrough: true });
    const gzip = 'POST /v1/a HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nLIST /v1/b HTTP/1.1\r\n\r\n';
    expect(run(gzip)).toMatchObject({ out: gzip, passthrough: true });
    const badChunk = 'POST /v1/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nLIST /v1/b HTTP/1.1\r\n\r\n';
    expect(run(badChunk)).toMatchObject({ out: badChunk, passthrough: true });
  });

  it('stops translating after an upgrade request', () => {
    const input = 'GET /v1/ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nLIST /v1/b HTTP/1.1\r\n\r\n';
    expect(run(input)).toMatchObject({ out: input, passthrough: true });
  });

  it('releases an oversized head untouched instead of holding it forever', () => {
    const big = 'LIST /v1/a HTTP/1.1\r\nX-Big: ' + 'a'.repeat(70 * 1024);
    const r = run(big, [1000]);
    expect(r.out).toBe(big);
    expect(r.passthrough).toBe(true);
  });
});

describe('wrapConnection', () => {
  it('cuts off a client that trickles a request head and never finishes it', async () => {
    const server = net.createServer((s) => {
      const wrapped = wrapConnection(s, { headTimeoutMs: 100 });
      wrapped.on('error', () => undefined);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    const client = net.connect(port, '127.0.0.1');
    client.on('error', () => undefined);
    client.write('LIST /v1/a HTTP/1.1\r\nHost: x\r\n');
    const closed = await new Promise<boolean>((resolve) => {
      client.on('close', () => resolve(true));
      setTimeout(() => resolve(false), 3000).unref();
    });
    expect(closed).toBe(true);
    await new Promise((r) => server.close(r));
  });
});

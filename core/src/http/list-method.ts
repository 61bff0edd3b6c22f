/**
 * The `LIST` (and OpenBao's `SCAN`) verb in front of Node's HTTP parser.
 *
 * llhttp knows a fixed set of methods and answers 400 to `LIST` before any
 * handler runs, yet curl `-X LIST`, hvac, node-vault and the Vault CLI send it.
 * `SCAN` (a recursive listing) is rewritten the same way, to GET plus its own
 * marker header `x-strongroom-scan-verb: 1`; what follows holds for both.
 * So every accepted connection is wrapped: the bytes the client sends pass
 * through a small HTTP/1.1 request-framing tracker that rewrites a request line
 * `LIST <target> HTTP/1.x` to `GET <target> HTTP/1.x` and inserts the marker
 * header `x-strongroom-list-verb: 1` right after it.
 *
 * What must stay true:
 * - Only request heads are ever rewritten. Bodies (Content-Length and chunked)
 *   are tracked byte for byte and passed through untouched, so a body that
 *   contains "LIST /x" is never altered, on keep-alive and pipelined
 *   connections alike, however the bytes are split across packets.
 * - A client-sent copy of the marker header is removed from every head, so a
 *   client cannot set it by hand. (It would gain nothing beyond `?list=true`
 *   anyway: the marker only selects the list operation, never authorisation.)
 * - When a head cannot be framed with certainty (conflicting or invalid
 *   Content-Length, a non-chunked Transfer-Encoding, an upgrade, an oversized
 *   head) the connection switches to pass-through for good: llhttp then sees
 *   the raw bytes and rejects or handles them itself. We never guess framing.
 * - Hot path (no LIST, no marker): a head that arrives in one packet is passed
 *   on as a view of that packet, never copied.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** Internal header that marks a request received with the `LIST` verb. */
export const LIST_MARKER_HEADER = 'x-strongroom-list-verb';
/** Internal header that marks a request received with the `SCAN` verb (same length as the LIST one). */
export const SCAN_MARKER_HEADER = 'x-strongroom-scan-verb';

const MARKER_LINE = Buffer.from(`${LIST_MARKER_HEADER}: 1\r\n`, 'latin1');
const SCAN_MARKER_LINE = Buffer.from(`${SCAN_MARKER_HEADER}: 1\r\n`, 'latin1');
const GET = Buffer.from('GET', 'latin1');
const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);

/** Heads larger than this are left to llhttp (its own limit is 16 KiB by default: it answers 431). */
const MAX_HEAD_BYTES = 64 * 1024;
/** How long an unfinished request head may be held back (Node's own headersTimeout default). */
const HEAD_TIMEOUT_MS = 60_000;
/** A chunk-size line (hex size plus extensions) longer than this is malformed. */
const MAX_CHUNK_LINE_BYTES = 4096;
/** Trailer section of a chunked body. */
const MAX_TRAILER_BYTES = 64 * 1024;

type State =
  | 'head'
  | 'body' // Content-Length body: `remaining` bytes left
  | 'chunk-size' // reading a chunk-size line
  | 'chunk-data' // `remaining` bytes of chunk data left
  | 'chunk-data-end' // the CRLF after chunk data
  | 'trailers' // trailer lines after the last chunk, until an empty line
  | 'passthrough';

export interface ListVerbTranslator {
  /** Feeds bytes received from the client; returns the bytes to hand to the HTTP parser, in order. */
  push(chunk: Buffer): Buffer[];
  /** Whether the translator has given up framing this connection (tests, diagnostics). */
  readonly passthrough: boolean;
  /** Whether an unfinished request head is held back (not yet visible to the HTTP parser). */
  readonly holding: boolean;
}

interface HeadInfo {
  /** Head bytes to emit (the original bytes when nothing changed). */
  out: Buffer;
  framing: { kind: 'none' } | { kind: 'length'; length: number } | { kind: 'chunked' } | { kind: 'unframeable' };
  /** After this request the stream is no longer HTTP/1.1 requests (Upgrade, CONNECT). */
  stopAfter: boolean;
}

/** One translator per connection: it carries the framing state across packets. */
export function createListVerbTranslator(): ListVerbTranslator {
  let state: State = 'head';
  /** Head bytes from earlier packets, when the current head spans packets. */
  let headParts: Buffer[] = [];
  let headBytes = 0;
  /** Bytes of the current line seen so far, and its last byte (to recognise an empty CRLF line across packets). */
  let lineBytes = 0;
  let lineLastByte = -1;
  /** Whether the current head has its request line yet (empty lines before it are passed on). */
  let headStarted = false;
  let remaining = 0;
  let chunkLine = '';
  let trailerBytes = 0;
  let stopAfterBody = false;

  // Per-push output state.
  let chunk: Buffer = EMPTY;
  let out: Buffer[] = [];
  /** Start of the bytes of `chunk` not yet emitted (nor held in headParts). */
  let emitFrom = 0;

  function flushTo(end: number): void {
    if (end > emitFrom) out.push(emitFrom === 0 && end === chunk.length ? chunk : chunk.subarray(emitFrom, end));
    emitFrom = end;
  }

  function releaseHeld(): void {
    if (headParts.length > 0) out.push(...headParts);
    headParts = [];
    headBytes = 0;
  }

  function giveUp(pos: number): void {
    releaseHeld();
    flushTo(pos);
    state = 'passthrough';
  }

  /** A message ended at `pos` of the current chunk. */
  function afterMessage(pos: number): void {
    flushTo(pos);
    state = stopAfterBody ? 'passthrough' : 'head';
    lineBytes = 0;
    lineLastByte = -1;
    headStarted = false;
  }

  function startBody(info: HeadInfo, pos: number): void {
    stopAfterBody = info.stopAfter;
    const framing = info.framing;
    if (framing.kind === 'unframeable') {
      state = 'passthrough';
    } else if (framing.kind === 'length' && framing.length > 0) {
      state = 'body';
      remaining = framing.length;
    } else if (framing.kind === 'chunked') {
      state = 'chunk-size';
      chunkLine = '';
      lineBytes = 0;
    } else {
      afterMessage(pos);
    }
  }

  function push(data: Buffer): Buffer[] {
    chunk = data;
    out = [];
    emitFrom = 0;
    const len = data.length;
    let pos = 0;

    while (pos < len) {
      switch (state) {
        case 'passthrough': {
          pos = len;
          break;
        }
        case 'body': {
          const take = Math.min(remaining, len - pos);
          remaining -= take;
          pos += take;
          if (remaining === 0) afterMessage(pos);
          break;
        }
        case 'chunk-data': {
          const take = Math.min(remaining, len - pos);
          remaining -= take;
          pos += take;
          if (remaining === 0) {
            state = 'chunk-data-end';
            lineBytes = 0;
          }
          break;
        }
        case 'chunk-data-end': {
          // Exactly CRLF (or a bare LF) must follow chunk data; anything else is malformed.
          const b = data[pos] as number;
          pos += 1;
          if (lineBytes === 0 && b === CR) {
            lineBytes = 1;
          } else if (b === LF) {
            state = 'chunk-size';
            chunkLine = '';
            lineBytes = 0;
          } else {
            state = 'passthrough';
          }
          break;
        }
        case 'chunk-size': {
          const nl = data.indexOf(LF, pos);
          const end = nl === -1 ? len : nl;
          lineBytes += end - pos;
          if (lineBytes > MAX_CHUNK_LINE_BYTES) {
            state = 'passthrough';
            break;
          }
          chunkLine += data.toString('latin1', pos, end);
          if (nl === -1) {
            pos = len;
            break;
          }
          pos = nl + 1;
          const size = parseChunkSize(chunkLine);
          if (size === null) {
            state = 'passthrough';
          } else if (size === 0) {
            state = 'trailers';
            trailerBytes = 0;
            lineBytes = 0;
            lineLastByte = -1;
          } else {
            state = 'chunk-data';
            remaining = size;
          }
          break;
        }
        case 'trailers': {
          const nl = data.indexOf(LF, pos);
          const end = nl === -1 ? len : nl;
          trailerBytes += end - pos + 1;
          if (trailerBytes > MAX_TRAILER_BYTES) {
            state = 'passthrough';
            break;
          }
          if (end > pos) {
            lineBytes += end - pos;
            lineLastByte = data[end - 1] as number;
          }
          if (nl === -1) {
            pos = len;
            break;
          }
          pos = nl + 1;
          const empty = lineBytes === 0 || (lineBytes === 1 && lineLastByte === CR);
          lineBytes = 0;
          lineLastByte = -1;
          if (empty) afterMessage(pos);
          break;
        }
        case 'head': {
          const nl = data.indexOf(LF, pos);
          const end = nl === -1 ? len : nl;
          if (end > pos) {
            lineBytes += end - pos;
            lineLastByte = data[end - 1] as number;
          }
          if (nl === -1) {
            pos = len; // held below, after the loop
            break;
          }
          pos = nl + 1;
          const empty = lineBytes === 0 || (lineBytes === 1 && lineLastByte === CR);
          lineBytes = 0;
          lineLastByte = -1;
          if (headBytes + (pos - emitFrom) > MAX_HEAD_BYTES) {
            giveUp(pos);
            break;
          }
          if (!headStarted) {
            // Blank lines before a request line are tolerated by llhttp: pass them on as they are.
            if (empty) {
              releaseHeld();
              flushTo(pos);
            } else {
              headStarted = true;
            }
            break;
          }
          if (!empty) break;
          const tail = emitFrom === 0 && pos === len ? data : data.subarray(emitFrom, pos);
          const head = headParts.length === 0 ? tail : Buffer.concat([...headParts, tail]);
          headParts = [];
          headBytes = 0;
          emitFrom = pos;
          const info = inspectHead(head);
          out.push(info.out);
          startBody(info, pos);
          break;
        }
      }
    }

    if (state === 'head' && emitFrom < len) {
      // An unfinished head: hold it until its end arrives.
      headParts.push(emitFrom === 0 ? data : data.subarray(emitFrom));
      headBytes += len - emitFrom;
      emitFrom = len;
      if (headBytes > MAX_HEAD_BYTES) giveUp(len);
    } else {
      flushTo(len);
    }
    const result = out;
    chunk = EMPTY;
    out = [];
    return result;
  }

  return {
    push,
    get passthrough() {
      return state === 'passthrough';
    },
    get holding() {
      return headParts.length > 0;
    },
  };
}

/** Hex chunk size before any `;extension`; null when malformed or beyond safe integers. */
function parseChunkSize(line: string): number | null {
  let text = line.endsWith('\r') ? line.slice(0, -1) : line;
  const semi = text.indexOf(';');
  if (semi !== -1) text = text.slice(0, semi);
  text = text.trim();
  if (text.length === 0 || text.length > 13 || !/^[0-9a-fA-F]+$/.test(text)) return null;
  return parseInt(text, 16);
}

const CONTENT_LENGTH = 'content-length';
const TRANSFER_ENCODING = 'transfer-encoding';
const UPGRADE = 'upgrade';

/** Reads the framing of one complete head and rewrites it when it is a LIST or SCAN or carries a marker header. */
function inspectHead(head: Buffer): HeadInfo {
  const firstLf = head.indexOf(LF);
  const isList =
    head.length > 5 && head[0] === 0x4c && head[1] === 0x49 && head[2] === 0x53 && head[3] === 0x54 && head[4] === 0x20;
  const isScan =
    head.length > 5 && head[0] === 0x53 && head[1] === 0x43 && head[2] === 0x41 && head[3] === 0x4e && head[4] === 0x20;
  const isConnect = head[0] === 0x43 && head.toString('latin1', 0, 8) === 'CONNECT ';

  let contentLength: number | null = null;
  let lengthCount = 0;
  let badLength = false;
  let transferEncoding: string | null = null;
  let upgrade = false;
  let markerLines: Array<[number, number]> | null = null;

  let lineStart = firstLf + 1;
  while (lineStart < head.length) {
    const nl = head.indexOf(LF, lineStart);
    const lineEnd = nl === -1 ? head.length : nl;
    const colon = head.indexOf(0x3a, lineStart);
    if (colon !== -1 && colon < lineEnd) {
      const nameLength = colon - lineStart;
      // Only names of the lengths we care about are decoded: most header lines cost one indexOf.
      if (nameLength === CONTENT_LENGTH.length || nameLength === TRANSFER_ENCODING.length || nameLength === UPGRADE.length || nameLength === LIST_MARKER_HEADER.length) {
        const name = head.toString('latin1', lineStart, colon).toLowerCase();
        const value = () => head.toString('latin1', colon + 1, lineEnd).trim();
        if (name === CONTENT_LENGTH) {
          lengthCount += 1;
          const v = value();
          if (/^[0-9]{1,15}$/.test(v)) contentLength = Number(v);
          else badLength = true;
        } else if (name === TRANSFER_ENCODING) {
          transferEncoding = transferEncoding === null ? value() : `${transferEncoding},${value()}`;
        } else if (name === UPGRADE) {
          upgrade = true;
        } else if (name === LIST_MARKER_HEADER || name === SCAN_MARKER_HEADER) {
          (markerLines ??= []).push([lineStart, nl === -1 ? head.length : nl + 1]);
        }
      }
    }
    lineStart = lineEnd + 1;
  }

  let framing: HeadInfo['framing'];
  if (badLength || lengthCount > 1 || (transferEncoding !== null && lengthCount > 0)) {
    framing = { kind: 'unframeable' };
  } else if (transferEncoding !== null) {
    const codings = transferEncoding.toLowerCase().split(',').map((s) => s.trim());
    framing = codings[codings.length - 1] === 'chunked' ? { kind: 'chunked' } : { kind: 'unframeable' };
  } else if (contentLength !== null) {
    framing = { kind: 'length', length: contentLength };
  } else {
    framing = { kind: 'none' };
  }

  const stopAfter = upgrade || isConnect;
  if (!isList && !isScan && markerLines === null) return { out: head, framing, stopAfter };

  const parts: Buffer[] = [];
  if (isList || isScan) {
    parts.push(GET, head.subarray(4, firstLf + 1), isList ? MARKER_LINE : SCAN_MARKER_LINE);
  } else {
    parts.push(head.subarray(0, firstLf + 1));
  }
  let from = firstLf + 1;
  for (const [start, end] of markerLines ?? []) {
    parts.push(head.subarray(from, start));
    from = end;
  }
  parts.push(head.subarray(from));
  return { out: Buffer.concat(parts), framing, stopAfter };
}

/** A socket wrapped for the HTTP server: what it reads is translated; what it writes goes straight to the socket. */
export interface TranslatedConnection extends Duplex {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly encrypted: boolean;
}

/**
 * Wraps an accepted (plain or already TLS-terminated) socket so that Node's
 * HTTP server reads translated bytes. Hand the result to
 * `httpServer.emit('connection', wrapped)`.
 */
export function wrapConnection(socket: Socket, opts: { encrypted?: boolean; headTimeoutMs?: number } = {}): TranslatedConnection {
  const translator = createListVerbTranslator();
  const headTimeoutMs = opts.headTimeoutMs ?? HEAD_TIMEOUT_MS;
  let paused = false;
  /**
   * A head we hold back is invisible to Node's headersTimeout, so a client
   * trickling one in byte by byte is cut off here instead.
   */
  let headTimer: NodeJS.Timeout | null = null;

  const duplex = new Duplex({
    allowHalfOpen: true,
    read() {
      if (paused) {
        paused = false;
        socket.resume();
      }
    },
    write(chunk: Buffer, encoding, callback) {
      if (socket.write(chunk, encoding)) callback();
      else socket.once('drain', () => callback());
    },
    writev(chunks, callback) {
      socket.cork();
      let ok = true;
      for (const c of chunks) ok = socket.write(c.chunk as Buffer, c.encoding);
      socket.uncork();
      if (ok) callback();
      else socket.once('drain', () => callback());
    },
    final(callback) {
      socket.end(() => callback());
    },
    destroy(err, callback) {
      socket.destroy(err ?? undefined);
      callback(err);
    },
  });

  socket.on('data', (data: Buffer) => {
    const pieces = translator.push(data);
    for (const piece of pieces) {
      if (!duplex.push(piece)) paused = true;
    }
    if (paused) socket.pause();
    if (translator.holding) {
      headTimer ??= setTimeout(() => socket.destroy(), headTimeoutMs).unref();
    } else if (headTimer) {
      clearTimeout(headTimer);
      headTimer = null;
    }
  });
  socket.on('end', () => duplex.push(null));
  socket.on('error', (err) => duplex.destroy(err));
  socket.on('close', () => {
    if (headTimer) clearTimeout(headTimer);
    duplex.destroy();
  });
  socket.on('timeout', () => duplex.emit('timeout'));

  const encrypted = opts.encrypted ?? false;
  Object.defineProperties(duplex, {
    remoteAddress: { get: () => socket.remoteAddress },
    remotePort: { get: () => socket.remotePort },
    localAddress: { get: () => socket.localAddress },
    localPort: { get: () => socket.localPort },
    encrypted: { value: encrypted },
  });
  // Node's HTTP server calls these on the connection it is given.
  const extras = {
    setTimeout(ms: number, cb?: () => void) {
      socket.setTimeout(ms);
      if (cb) duplex.once('timeout', cb);
      return duplex;
    },
    setNoDelay(noDelay?: boolean) {
      socket.setNoDelay(noDelay);
      return duplex;
    },
    setKeepAlive(enable?: boolean, delay?: number) {
      socket.setKeepAlive(enable, delay);
      return duplex;
    },
    destroySoon() {
      duplex.end();
      if (duplex.writableFinished) duplex.destroy();
      else duplex.once('finish', () => duplex.destroy());
    },
  };
  Object.assign(duplex, extras);
  return duplex as TranslatedConnection;
}


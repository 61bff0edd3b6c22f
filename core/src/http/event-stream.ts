/**
 * The two transports of a streamed reply (sys/events/subscribe): server-sent
 * events on a plain response, and WebSocket text frames (the `ws` package)
 * after an upgrade. Each is an EventSink: `send` says when its buffer is full,
 * so the hub stops writing to this subscriber (and starts counting drops)
 * instead of buffering without bound.
 *
 * An SSE response is full when its socket is: the kernel's buffers hold
 * megabytes before that. A WebSocket is held to a window instead: a ping
 * carrying the byte count sent so far goes out every half window, and the
 * client's pong (which every WebSocket client sends, echoing the count, once
 * it has read that far) acknowledges it; more than a window unacknowledged
 * and the socket counts as full, so a client that stops reading is found
 * after a window, not after the kernel's buffers.
 */
import type * as http from 'node:http';
import type { WebSocket } from 'ws';
import type { EventSink, Frame } from '../events/hub.js';

/** A comment line this often keeps proxies and idle timeouts from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** Bytes a WebSocket may hold unsent before the subscriber counts as slow. */
const WS_HIGH_WATER = 64 * 1024;
/** Bytes sent to a WebSocket client and not yet acknowledged by its pong, at most. */
const WS_WINDOW = 128 * 1024;

const SSE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  Connection: 'keep-alive',
  // nginx and friends: do not buffer a stream.
  'X-Accel-Buffering': 'no',
};

export function sseSink(res: http.ServerResponse): EventSink {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const closed: Array<() => void> = [];
  let done = false;
  res.once('close', () => {
    clearInterval(heartbeat);
    done = true;
    for (const cb of closed) cb();
  });
  return {
    send(frame: Frame) {
      if (done) return true;
      let text = '';
      if (frame.id) text += `id: ${frame.id}\n`;
      if (frame.name) text += `event: ${frame.name}\n`;
      // Event JSON has no raw newline, so one data line carries it.
      text += `data: ${frame.data}\n\n`;
      return res.write(text);
    },
    onDrain: (cb) => void (done ? cb() : res.once('drain', cb)),
    end(reason) {
      if (done) return;
      res.end(`event: end\ndata: ${JSON.stringify({ event_type: 'end', reason })}\n\n`);
    },
    onClose: (cb) => void closed.push(cb),
  };
}

export function webSocketSink(ws: WebSocket): EventSink {
  const closed: Array<() => void> = [];
  let waiting: Array<() => void> = [];
  /** Bytes sent; the count the last ping carried; the count the client acknowledged. */
  let sent = 0;
  let pinged = 0;
  let acked = 0;
  const full = () => ws.bufferedAmount >= WS_HIGH_WATER || sent - acked > WS_WINDOW;
  const release = () => {
    if (full() || waiting.length === 0) return;
    const w = waiting;
    waiting = [];
    for (const cb of w) cb();
  };
  ws.on('pong', (data: Buffer) => {
    const n = Number(data.toString('latin1'));
    if (Number.isSafeInteger(n) && n > acked && n <= sent) acked = n;
    release();
  });
  const ping = setInterval(() => ws.ping(String(sent)), HEARTBEAT_MS);
  ping.unref();
  ws.on('message', () => undefined);
  ws.on('error', () => undefined);
  ws.once('close', () => {
    clearInterval(ping);
    const w = waiting;
    waiting = [];
    for (const cb of w) cb();
    for (const cb of closed) cb();
  });
  return {
    send(frame) {
      if (ws.readyState !== ws.OPEN) return true;
      ws.send(frame.data, () => release());
      sent += Buffer.byteLength(frame.data);
      if (sent - pinged >= WS_WINDOW / 2) {
        pinged = sent;
        ws.ping(String(sent));
      }
      return !full();
    },
    onDrain(cb) {
      if (ws.readyState !== ws.OPEN || !full()) cb();
      else waiting.push(cb);
    },
    end(reason) {
      if (ws.readyState === ws.OPEN) ws.close(1000, reason.slice(0, 120));
    },
    onClose: (cb) => void closed.push(cb),
  };
}

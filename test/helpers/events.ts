/**
 * A server-sent-events client for sys/events/subscribe: frames as they come
 * (id, SSE event name, parsed JSON), waiting for one, and the stream's end.
 */
import * as http from 'node:http';
import { waitFor } from './processes';

export interface SseFrame {
  id?: string;
  /** The SSE event name: absent for events, `dropped`, `gap` or `end` for notices. */
  name?: string;
  data: any;
}

export interface SseSubscription {
  status: number;
  frames: SseFrame[];
  /** Events only (no notices). */
  events(): any[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  waitForEvent(pred: (e: any) => boolean, what?: string, ms?: number): Promise<any>;
  close(): void;
  /** The raw response, to pause it (a stalled reader) and resume it. */
  res: http.IncomingMessage;
}

function parseSse(text: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  const parts = text.split('\n\n');
  const rest = parts.pop() ?? '';
  for (const part of parts) {
    const f: Partial<SseFrame> = {};
    let data = '';
    for (const line of part.split('\n')) {
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'id') f.id = value;
      else if (field === 'event') f.name = value;
      else if (field === 'data') data += value;
    }
    if (data !== '') frames.push({ ...f, data: JSON.parse(data) } as SseFrame);
  }
  return { frames, rest };
}

export function subscribeSse(baseUrl: string, eventType: string, opts: { token: string; namespace?: string; lastEventId?: string; query?: string }): Promise<SseSubscription> {
  const headers: Record<string, string> = { 'X-Vault-Token': opts.token, Accept: 'text/event-stream' };
  if (opts.namespace) headers['X-Vault-Namespace'] = opts.namespace;
  if (opts.lastEventId) headers['Last-Event-ID'] = opts.lastEventId;
  const url = `${baseUrl}/v1/sys/events/subscribe/${eventType}${opts.query ? `?${opts.query}` : ''}`;
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      const frames: SseFrame[] = [];
      let buf = '';
      let ended = false;
      const endedP = new Promise<void>((r) => {
        res.on('end', () => ((ended = true), r()));
        res.on('close', () => ((ended = true), r()));
        res.on('error', () => ((ended = true), r()));
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        const { frames: got, rest } = parseSse(buf);
        buf = rest;
        frames.push(...got);
      });
      const sub: SseSubscription = {
        status: res.statusCode ?? 0,
        frames,
        events: () => frames.filter((f) => !f.name).map((f) => f.data),
        ended: endedP,
        isEnded: () => ended,
        waitForEvent: (pred, what = 'an event', ms = 30_000) => waitFor(what, () => frames.find((f) => !f.name && pred(f.data))?.data, ms),
        close: () => req.destroy(),
        res,
      };
      resolve(sub);
    });
    req.on('error', reject);
  });
}

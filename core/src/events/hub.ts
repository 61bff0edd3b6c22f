/**
 * The change-event hub: engines and the core publish here, and it stamps
 * each event (id, time), keeps it in a bounded log for `Last-Event-ID`
 * resumption, and fans it out to the subscribers whose event type and
 * namespaces it matches.
 *
 * What must stay true:
 * - publish() never waits: it appends to the log and to each matching
 *   subscriber's bounded queue. A subscriber whose queue is full loses the
 *   event and is told how many it lost (a `dropped` frame) once it drains, so
 *   a slow reader can never slow the request that caused the event.
 * - Whether a subscriber may see an event is decided when it is delivered
 *   (its token looked up again, its ACL asked then), not when it subscribed.
 * - Each event is serialised once, whatever the number of subscribers.
 */
import { randomBytes } from 'node:crypto';

/** An event as subscribers receive it (JSON). Metadata is never secret: versions, names, counts. */
export interface ChangeEvent {
  id: string;
  event_type: string;
  /** RFC 3339. */
  time: string;
  /** The namespace's path ("" for the root namespace). */
  namespace: string;
  /** The mount's path ("secret/"; "sys/" for the core's own events). */
  mount: string;
  /** The path the event is about, relative to its namespace ("secret/data/app/x"). */
  path: string;
  metadata: Record<string, string | number | boolean>;
}

/** Who may see an event: `read` or `list` on `path`, or `sudo` on it (leases, mounts). */
export type EventAccess = { capability: 'read-or-list' | 'sudo'; path: string };

export interface EventInput {
  type: string;
  namespaceId: string;
  namespacePath: string;
  mount: string;
  path: string;
  metadata?: Record<string, string | number | boolean>;
  /** Default: read or list on `path`. */
  access?: EventAccess;
}

/** An event in the log and in the queues: what subscribers see, and what the hub needs to route it. */
export interface StampedEvent {
  seq: number;
  event: ChangeEvent;
  /** `event` serialised once. */
  json: string;
  namespaceId: string;
  access: EventAccess;
  at: number;
}

/** One frame to a subscriber: an event (with its id) or a notice (`dropped`, `gap`). */
export interface Frame {
  id?: string;
  /** SSE event name for notices; events themselves go as plain messages. */
  name?: string;
  data: string;
}

/** Where a subscription writes: an SSE response or a WebSocket (core/src/http/event-stream.ts). */
export interface EventSink {
  /** Writes one frame; false when the transport's buffer is full (wait for onDrain). */
  send(frame: Frame): boolean;
  onDrain(cb: () => void): void;
  /** Ends the stream from the server's side. */
  end(reason: string): void;
  /** The client went away. */
  onClose(cb: () => void): void;
}

export type Verdict = 'deliver' | 'skip' | 'end';

export interface SubscribeOptions {
  /** Event type glob (`*` matches any run of characters, `/` included). */
  eventType: string;
  /** Whether events of this namespace reach the subscriber. */
  namespaces(namespaceId: string, namespacePath: string): boolean;
  /** Asked for each event at delivery: deliver, skip (not allowed), or end the stream (token gone). */
  verdict(e: StampedEvent): Promise<Verdict>;
  /** The token whose revocation ends the stream (its HMAC key). */
  tokenKey: string;
  /** The client's `Last-Event-ID`: events after it are replayed from the log first. */
  lastEventId?: string | undefined;
}

export interface EventHubOptions {
  /** The log keeps at most this many events... */
  logMaxEvents: number;
  /** ...and none older than this (ms). */
  logMaxAgeMs: number;
  /** Events waiting for one subscriber before it starts dropping. */
  subscriberBuffer: number;
  now?: () => number;
  onPublish?(type: string): void;
  onDrop?(count: number): void;
}

export interface EventHubStats {
  subscribers: number;
  published: number;
  dropped: number;
  /** The most events any one subscriber has had waiting (never above subscriberBuffer). */
  maxQueued: number;
  logSize: number;
}

export interface EventHub {
  publish(input: EventInput): void;
  /** Starts delivering to `sink`; returns a function that ends the subscription. */
  subscribe(opts: SubscribeOptions, sink: EventSink): () => void;
  /** Ends every stream of this token (revoked or expired). */
  endToken(tokenKey: string): void;
  /** Ends every stream (seal, step-down): subscribers reconnect with Last-Event-ID. */
  endAll(reason: string): void;
  stats(): EventHubStats;
}

export const DEFAULT_EVENT_OPTIONS = { logMaxEvents: 10_000, logMaxAgeMs: 10 * 60_000, subscriberBuffer: 1024 };

/** `kv-v2/data-*` -> a regex over the whole type; only `*` is special. */
export function eventTypeMatcher(glob: string): (type: string) => boolean {
  if (!glob.includes('*')) return (t) => t === glob;
  const re = new RegExp(`^${glob.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return (t) => re.test(t);
}

type Queued = StampedEvent | { dropped: number; first: string; last: string };

export function createEventHub(opts: EventHubOptions): EventHub {
  const now = opts.now ?? Date.now;
  // Ids are `<node epoch>-<sequence>`: an id from another node or an earlier process is
  // recognised as such, and answered with a gap notice instead of a wrong replay.
  const epoch = randomBytes(6).toString('hex');
  let seq = 0;
  let published = 0;
  let droppedTotal = 0;
  let maxQueued = 0;
  /** The log: oldest first; `log[0].seq` is the oldest still replayable. */
  let log: StampedEvent[] = [];
  let logHead = 0;
  const subs = new Set<Subscriber>();

  const trim = () => {
    const t = now() - opts.logMaxAgeMs;
    const size = log.length - logHead;
    let drop = Math.max(0, size - opts.logMaxEvents);
    while (logHead + drop < log.length && log[logHead + drop]!.at < t) drop++;
    logHead += drop;
    // Compact now and then instead of shifting on every publish.
    if (logHead > 1024 && logHead * 2 > log.length) {
      log = log.slice(logHead);
      logHead = 0;
    }
  };

  class Subscriber {
    queue: Queued[] = [];
    queuedEvents = 0;
    running = false;
    closed = false;
    readonly matchesType: (t: string) => boolean;
    constructor(
      readonly o: SubscribeOptions,
      readonly sink: EventSink,
    ) {
      this.matchesType = eventTypeMatcher(o.eventType);
    }
    wants(e: StampedEvent): boolean {
      return this.matchesType(e.event.event_type) && this.o.namespaces(e.namespaceId, e.event.namespace);
    }
    offer(e: StampedEvent): void {
      if (this.closed) return;
      if (this.queuedEvents < opts.subscriberBuffer) {
        this.queue.push(e);
        this.queuedEvents++;
        if (this.queuedEvents > maxQueued) maxQueued = this.queuedEvents;
      } else {
        const tail = this.queue[this.queue.length - 1];
        if (tail && 'dropped' in tail) {
          tail.dropped++;
          tail.last = e.event.id;
        } else this.queue.push({ dropped: 1, first: e.event.id, last: e.event.id });
        droppedTotal++;
        opts.onDrop?.(1);
      }
      if (!this.running) void this.run();
    }
    /** Replayed from the log: beyond the buffer (the log is bounded), so a resume loses nothing it kept. */
    replay(events: StampedEvent[]): void {
      for (const e of events) {
        if (!this.wants(e)) continue;
        this.queue.push(e);
        this.queuedEvents++;
      }
      if (!this.running) void this.run();
    }
    async run(): Promise<void> {
      this.running = true;
      try {
        while (!this.closed && this.queue.length > 0) {
          const item = this.queue.shift()!;
          let frame: Frame;
          if ('dropped' in item) {
            // No id: the client's Last-Event-ID stays before the loss, so a reconnect replays it from the log.
            frame = { name: 'dropped', data: JSON.stringify({ event_type: 'dropped', count: item.dropped, first_id: item.first, last_id: item.last }) };
          } else {
            this.queuedEvents--;
            let v: Verdict;
            try {
              v = await this.o.verdict(item);
            } catch {
              v = 'skip';
            }
            if (v === 'end') {
              this.close('the token is no longer valid');
              return;
            }
            if (v === 'skip' || this.closed) continue;
            frame = { id: item.event.id, data: item.json };
          }
          if (!this.sink.send(frame)) await new Promise<void>((r) => this.sink.onDrain(r));
        }
      } finally {
        this.running = false;
      }
    }
    close(reason: string): void {
      if (this.closed) return;
      this.closed = true;
      this.queue = [];
      this.queuedEvents = 0;
      subs.delete(this);
      this.sink.end(reason);
    }
  }

  /** The log entries after `lastEventId`, or a gap notice when it cannot say. */
  const replayFrom = (lastEventId: string): { events: StampedEvent[]; gap: Record<string, unknown> | null } => {
    trim();
    const oldest = log[logHead];
    const m = /^([0-9a-f]+)-(\d+)$/.exec(lastEventId);
    const all = log.slice(logHead);
    if (m && m[1] === epoch) {
      const after = Number(m[2]);
      // Complete when the event right after the client's last is still in the log (or none came since).
      if (after >= seq || (oldest && oldest.seq <= after + 1)) return { events: all.filter((e) => e.seq > after), gap: null };
    }
    return {
      events: all,
      gap: {
        event_type: 'gap',
        last_event_id: lastEventId,
        reason: m && m[1] === epoch ? 'the events after last_event_id are no longer in the log' : 'last_event_id is not from this server (it restarted, or another node was active)',
        oldest_id: oldest?.event.id ?? null,
      },
    };
  };

  return {
    publish(input) {
      const at = now();
      const s = ++seq;
      const event: ChangeEvent = {
        id: `${epoch}-${s}`,
        event_type: input.type,
        time: new Date(at).toISOString(),
        namespace: input.namespacePath,
        mount: input.mount,
        path: input.path,
        metadata: input.metadata ?? {},
      };
      const stamped: StampedEvent = { seq: s, event, json: JSON.stringify(event), namespaceId: input.namespaceId, access: input.access ?? { capability: 'read-or-list', path: input.path }, at };
      log.push(stamped);
      trim();
      published++;
      opts.onPublish?.(input.type);
      for (const sub of subs) if (sub.wants(stamped)) sub.offer(stamped);
    },
    subscribe(o, sink) {
      const sub = new Subscriber(o, sink);
      if (o.lastEventId) {
        const { events, gap } = replayFrom(o.lastEventId);
        if (gap) sink.send({ name: 'gap', data: JSON.stringify(gap) });
        sub.replay(events);
      }
      subs.add(sub);
      sink.onClose(() => sub.close('closed by the client'));
      return () => sub.close('unsubscribed');
    },
    endToken(tokenKey) {
      for (const sub of subs) if (sub.o.tokenKey === tokenKey) sub.close('the token was revoked');
    },
    endAll(reason) {
      for (const sub of subs) sub.close(reason);
    },
    stats: () => ({ subscribers: subs.size, published, dropped: droppedTotal, maxQueued, logSize: log.length - logHead }),
  };
}

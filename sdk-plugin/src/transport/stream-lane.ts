/**
 * The calling end of a long-lived multiplexed stream: the core's Backend
 * stream to a plugin, a plugin's Storage and SystemView streams to the core,
 * the database engine's Database stream to a database plugin. The stream is
 * opened with the per-process secret on first use; replies go to the
 * multiplexer (mux.ts, whose `serveFrames` is the answering end). When the
 * stream errors or ends, `onBroken` names the error every call in flight fails
 * with, and the next call opens a new stream (a caller that must not reopen
 * stops calling).
 */
import * as grpc from '@grpc/grpc-js';
import type { WireFrame } from './codec.js';
import { SECRET_METADATA_KEY } from './handshake.js';
import { createMuxClient, type MuxClient } from './mux.js';

type FrameStream = grpc.ClientDuplexStream<WireFrame, WireFrame>;

export interface StreamLane {
  /** One call on the stream (opened if need be): see MuxClient.call. */
  call(kind: string, body: unknown, timeoutMs: number, fields?: Record<string, unknown>): Promise<WireFrame>;
  /** Opens the stream now rather than on the first call. */
  open(): void;
  /** Fails every call in flight with `err`; the stream stays. */
  failAll(err: Error): void;
  inFlight(): number;
  /** Cancels the stream, failing its calls in flight with `err`; a later call opens a new one. */
  close(err: Error): void;
}

export interface StreamLaneOptions {
  /** A client of a service whose `Stream` RPC is bidirectional. */
  client: grpc.Client;
  secret: string;
  /** The error of a call whose deadline passed. */
  onTimeout(kind: string, timeoutMs: number): Error;
  /** The stream broke (`cause` null: the peer ended it): the error its calls in flight fail with. */
  onBroken(cause: grpc.ServiceError | null): Error;
  /** MuxClientOptions.idleFrame: for a stream whose frames have a kind the peer drops. */
  idleFrame?: WireFrame;
}

export function createStreamLane(opts: StreamLaneOptions): StreamLane {
  let current: { stream: FrameStream; mux: MuxClient } | null = null;

  const open = (): MuxClient => {
    if (current) return current.mux;
    const md = new grpc.Metadata();
    md.set(SECRET_METADATA_KEY, opts.secret);
    const stream = (opts.client as unknown as { Stream(md: grpc.Metadata): FrameStream }).Stream(md);
    const mux = createMuxClient({ sink: stream, onTimeout: opts.onTimeout, idleFrame: opts.idleFrame });
    const lane = { stream, mux };
    const broken = (cause: grpc.ServiceError | null) => {
      if (current !== lane) return; // closed, or already replaced
      current = null;
      mux.failAll(opts.onBroken(cause));
    };
    stream.on('data', (f: WireFrame) => mux.receive(f));
    stream.on('error', (e: grpc.ServiceError) => broken(e));
    stream.on('end', () => broken(null));
    current = lane;
    return mux;
  };

  return {
    call: (kind, body, timeoutMs, fields) => open().call(kind, body, timeoutMs, fields),
    open: () => void open(),
    failAll: (err) => current?.mux.failAll(err),
    inFlight: () => current?.mux.inFlight() ?? 0,
    close(err) {
      const lane = current;
      current = null;
      lane?.mux.failAll(err);
      lane?.stream.cancel();
    },
  };
}

/**
 * A sys/monitor stream held open by a test: it reads the lines as they come
 * (fetch, chunked) until stopped, and waits for a line matching a pattern.
 */
import type { RunningServer } from './server';

export interface Monitor {
  text(): string;
  /** The first line matching `re`, waiting for it (up to 120 s). */
  waitFor(re: RegExp): Promise<string>;
  stop(): void;
}

export async function openMonitor(s: RunningServer, query: string, token = s.rootToken): Promise<Monitor> {
  const ac = new AbortController();
  const res = await fetch(`${s.url}/v1/sys/monitor?${query}`, { headers: { 'X-Service-Token': token }, signal: ac.signal });
  if (res.status !== 200) throw new Error(`sys/monitor: ${res.status} ${await res.text()}`);
  let text = '';
  let ended = false;
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    } catch {
      // aborted by stop()
    }
    ended = true;
  })();
  return {
    text: () => text,
    async waitFor(re) {
      for (const deadline = Date.now() + 120_000; ; ) {
        const line = text.split('\n').find((l) => re.test(l));
        if (line) return line;
        if (ended) throw new Error(`sys/monitor ended before ${re}; got:\n${text}`);
        if (Date.now() > deadline) throw new Error(`sys/monitor: no line matching ${re}; got:\n${text}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () => ac.abort(),
  };
}

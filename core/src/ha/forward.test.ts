import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiRequest } from '../http/types';
import { createForwarder, createReplayGuard, forwardingKey, signForwarded, verifyForwarded, FORWARDED_FOR_HEADER } from './forward';

const clientOf = (v: ReturnType<typeof verifyForwarded>) => (v && 'client' in v ? v.client : null);

describe('forwarder', () => {
  it('sends the request as it came, signed with the client address, and brings back the answer with its CORS headers', async () => {
    const key = forwardingKey(Buffer.alloc(32, 7));
    let seen: { method?: string; url?: string; origin?: string; client: string | null; body: string } | null = null;
    const active = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen = { method: req.method, url: req.url, origin: req.headers.origin, client: clientOf(verifyForwarded({ method: req.method!, url: req.url!, headers: req.headers, rawBody: Buffer.concat(chunks) }, { key, self: activeUrl, replays: createReplayGuard() })), body: Buffer.concat(chunks).toString() };
        res.writeHead(200, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': 'https://app.example', Vary: 'Origin', 'X-Internal': 'not passed' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => active.listen(0, '127.0.0.1', r));
    const activeUrl = `http://127.0.0.1:${(active.address() as AddressInfo).port}`;
    const fwd = createForwarder();
    try {
      const req = { method: 'POST', url: '/v1/secret/data/x', headers: { origin: 'https://app.example', 'content-type': 'application/json' }, rawBody: Buffer.from('{"a":1}'), remoteAddress: '10.1.2.3' } as unknown as ApiRequest;
      const reply = await fwd.forward(req, activeUrl, key);
      expect(seen).toEqual({ method: 'POST', url: '/v1/secret/data/x', origin: 'https://app.example', client: '10.1.2.3', body: '{"a":1}' });
      expect(reply.status).toBe(200);
      expect(reply.headers).toEqual({ 'access-control-allow-origin': 'https://app.example', vary: 'Origin' });
    } finally {
      fwd.close();
      active.close();
    }
  });
});

describe('the forwarding signature covers the whole request and is good once', () => {
  const key = forwardingKey(Buffer.alloc(32, 9));
  const self = 'http://10.0.0.1:8200';
  const base = () => ({
    method: 'POST',
    url: '/v1/secret/data/x',
    headers: { 'x-vault-token': 'hvs.victim', 'content-type': 'application/json' } as Record<string, string>,
    rawBody: Buffer.from('{"data":{"v":1}}'),
    remoteAddress: '10.1.2.3',
  });
  const signed = (now = 1_000_000) => {
    const req = base();
    return { ...req, headers: { ...req.headers, [FORWARDED_FOR_HEADER]: signForwarded(req, key, self, now) } };
  };

  it('vouches for the client once, and refuses the same request again', () => {
    const replays = createReplayGuard();
    const req = signed();
    expect(verifyForwarded(req, { key, self, replays }, 1_000_500)).toEqual({ client: '10.1.2.3' });
    expect(verifyForwarded(req, { key, self, replays }, 1_001_000)).toEqual({ refused: 'forwarded request replayed' });
  });

  it.each([
    ['another body', (r: ReturnType<typeof signed>) => ({ ...r, rawBody: Buffer.from('{"data":{"v":"evil"}}') })],
    ['another token', (r: ReturnType<typeof signed>) => ({ ...r, headers: { ...r.headers, 'x-vault-token': 'hvs.other' } })],
    ['a token added in another header', (r: ReturnType<typeof signed>) => ({ ...r, headers: { ...r.headers, authorization: 'Bearer hvs.other' } })],
    ['a namespace added', (r: ReturnType<typeof signed>) => ({ ...r, headers: { ...r.headers, 'x-vault-namespace': 'tenant' } })],
    ['a wrap TTL added', (r: ReturnType<typeof signed>) => ({ ...r, headers: { ...r.headers, 'x-vault-wrap-ttl': '60' } })],
    ['another URL', (r: ReturnType<typeof signed>) => ({ ...r, url: '/v1/secret/data/y' })],
    ['another method', (r: ReturnType<typeof signed>) => ({ ...r, method: 'PUT' })],
    ['another client address', (r: ReturnType<typeof signed>) => ({ ...r, headers: { ...r.headers, [FORWARDED_FOR_HEADER]: r.headers[FORWARDED_FOR_HEADER]!.replace('10.1.2.3', '10.9.9.9') } })],
  ])('refuses %s', (_what, change) => {
    expect(verifyForwarded(change(signed()), { key, self, replays: createReplayGuard() }, 1_000_500)).toEqual({ refused: 'forwarding signature does not match the request' });
  });

  it('refuses a request signed for another node, too old or from too far ahead, or malformed', () => {
    const replays = createReplayGuard();
    expect(verifyForwarded(signed(), { key, self: 'http://10.0.0.2:8200', replays }, 1_000_500)).toMatchObject({ refused: expect.stringMatching(/signature/) });
    expect(verifyForwarded(signed(), { key, self, replays }, 1_000_000 + 60_001)).toEqual({ refused: 'forwarded request too old' });
    expect(verifyForwarded(signed(), { key, self, replays }, 1_000_000 - 60_001)).toEqual({ refused: 'forwarded request too old' });
    const r = signed();
    expect(verifyForwarded({ ...r, headers: { ...r.headers, [FORWARDED_FOR_HEADER]: '10.1.2.3;1000000;abc' } }, { key, self, replays }, 1_000_500)).toEqual({ refused: 'malformed forwarding header' });
    expect(verifyForwarded(base(), { key, self, replays }, 1_000_500)).toBeNull();
  });

  it('the replay guard forgets nonces after the window and, when full, refuses what is older than it forgot', () => {
    const guard = createReplayGuard({ windowMs: 1000, max: 2 });
    expect(guard.claim('a', 100, 100)).toBe(true);
    expect(guard.claim('a', 100, 150)).toBe(false);
    expect(guard.claim('b', 200, 200)).toBe(true);
    expect(guard.claim('c', 300, 300)).toBe(true); // 'a' goes: nothing signed at or before 100 passes now
    expect(guard.claim('d', 100, 300)).toBe(false);
    expect(guard.claim('b', 200, 300)).toBe(false);
    expect(guard.claim('b', 2300, 2300)).toBe(true); // 'b' was forgotten after its window
  });
});

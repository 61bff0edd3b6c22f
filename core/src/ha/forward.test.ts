import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiRequest } from '../http/types';
import { createForwarder, forwardedClient, forwardingKey } from './forward';

describe('forwarder', () => {
  it('sends the request as it came, signed with the client address, and brings back the answer with its CORS headers', async () => {
    const key = forwardingKey(Buffer.alloc(32, 7));
    let seen: { method?: string; url?: string; origin?: string; client: string | null; body: string } | null = null;
    const active = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen = { method: req.method, url: req.url, origin: req.headers.origin, client: forwardedClient({ method: req.method!, url: req.url!, headers: req.headers }, key), body: Buffer.concat(chunks).toString() };
        res.writeHead(200, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': 'https://app.example', Vary: 'Origin', 'X-Internal': 'not passed' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => active.listen(0, '127.0.0.1', r));
    const fwd = createForwarder();
    try {
      const req = { method: 'POST', url: '/v1/secret/data/x', headers: { origin: 'https://app.example', 'content-type': 'application/json' }, rawBody: Buffer.from('{"a":1}'), remoteAddress: '10.1.2.3' } as unknown as ApiRequest;
      const reply = await fwd.forward(req, `http://127.0.0.1:${(active.address() as AddressInfo).port}`, key);
      expect(seen).toEqual({ method: 'POST', url: '/v1/secret/data/x', origin: 'https://app.example', client: '10.1.2.3', body: '{"a":1}' });
      expect(reply.status).toBe(200);
      expect(reply.headers).toEqual({ 'access-control-allow-origin': 'https://app.example', vary: 'Origin' });
    } finally {
      fwd.close();
      active.close();
    }
  });
});

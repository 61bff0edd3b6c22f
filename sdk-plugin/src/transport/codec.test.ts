import { StrongroomError, badRequest, codedError, unrecoverable } from '../errors.js';
import type { LogicalRequest, LogicalResponse, MountInfo } from '../logical.js';
import type { BackendDescription } from '../describe.js';
import {
  decodeDescription,
  decodeError,
  decodeHandleReply,
  decodeRequest,
  encodeDescription,
  encodeError,
  encodeHandleReply,
  encodeRequest,
  type WireFrame,
} from './codec.js';
import { loadProtos } from './proto.js';

/** Through real protobuf bytes, as on the wire. */
const viaWire = (frame: WireFrame): WireFrame => {
  const stream = (loadProtos().Backend.service as unknown as Record<string, { requestSerialize(v: unknown): Buffer; requestDeserialize(b: Buffer): WireFrame }>).Stream;
  if (!stream) throw new Error('no Stream');
  return stream.requestDeserialize(stream.requestSerialize(frame));
};

const mount: MountInfo = { path: 'transit/', type: 'transit', uuid: 'u-1', accessor: 'transit_1', namespace: 'ns1/', options: { a: 'b' }, isAuth: false };

describe('codec: TS shapes <-> proto messages', () => {
  test('a request with secret and auth survives protobuf unchanged', () => {
    const req: LogicalRequest = {
      id: 'r1',
      operation: 'renew',
      path: 'creds/x',
      mount,
      data: { n: 1, s: 'é', nested: { a: [1, null, true] } },
      client: { remoteAddress: '10.0.0.1', displayName: 'approle', tokenAccessor: 'acc', entityId: 'e', policies: ['p1', 'p2'], metadata: { role: 'r' } },
      secret: { leaseId: 'l', secretType: 'creds', internalData: { user: 'u' }, ttl: 60, increment: 30, issueTime: 1_700_000_000_123, lastRenewalTime: null },
      auth: { internalData: { k: 1 }, metadata: { m: 'v' }, policies: ['default'] },
      headers: { 'x-h': 'v' },
    };
    const frame = viaWire({ id: 7, handle_request: encodeRequest(req) });
    expect(frame.kind).toBe('handle_request');
    expect(decodeRequest(frame.handle_request as never, mount)).toEqual(req);
    const renewed = { ...req, secret: { ...req.secret!, lastRenewalTime: 1_700_000_100_000 } };
    expect(decodeRequest(viaWire({ id: 8, handle_request: encodeRequest(renewed) }).handle_request as never, mount).secret?.lastRenewalTime).toBe(
      1_700_000_100_000,
    );
  });

  test('responses keep null data distinct from absent data, and every optional part', () => {
    const full: LogicalResponse = {
      data: { a: 1 },
      secret: { type: 'creds', ttl: 10, maxTtl: 20, renewable: true, internalData: { x: 'y' } },
      auth: {
        displayName: 'approle',
        policies: ['a'],
        identityPolicies: [],
        noDefaultPolicy: true,
        metadata: { role_name: 'r' },
        internalData: { id: 1 },
        ttl: 1,
        maxTtl: 2,
        explicitMaxTtl: 3,
        period: 4,
        numUses: 5,
        renewable: false,
        boundCidrs: ['10.0.0.0/8'],
        tokenType: 'service',
        aliasName: 'alias',
      },
      warnings: ['w'],
      redirect: '/v1/x',
      raw: { status: 200, contentType: 'text/plain', body: 'aGk=', base64: true },
      status: 207,
    };
    for (const r of [full, { data: null }, {}, null] as Array<LogicalResponse | null>) {
      const frame = viaWire({ id: 1, handle_request_reply: encodeHandleReply(r) });
      expect(decodeHandleReply(frame.handle_request_reply as never)).toEqual(r);
    }
  });

  test('typed errors keep code, status and details; unknown errors reveal nothing', () => {
    for (const e of [badRequest('bad', ['f: x']), codedError(418, 'teapot'), unrecoverable('gone')]) {
      const frame = viaWire({ id: 1, handle_request_reply: { response: null, err: encodeError(e) } });
      const back = (() => {
        try {
          decodeHandleReply(frame.handle_request_reply as never);
        } catch (err) {
          return err as StrongroomError;
        }
        throw new Error('expected error');
      })();
      expect([back.code, back.status, back.message, back.details, back.retryable]).toEqual([e.code, e.status, e.message, e.details, e.retryable]);
    }
    expect(encodeError(new Error('password=hunter2'))).toEqual({ code: 'internal', message: 'internal error', status: 500, details: [] });
    expect(decodeError({ code: 'made_up', message: 'm', status: 0, details: [] })).toMatchObject({ code: 'internal', status: 500 });
  });

  test('descriptions survive with their JSON Schemas', () => {
    const d: BackendDescription = {
      help: 'h',
      secretTypes: ['s'],
      paths: [
        {
          pattern: 'keys/:name',
          fields: [
            { name: 'name', schema: { type: 'string', minLength: 1 }, description: 'n', required: true, inPath: true },
            { name: 'pw', schema: { type: 'string' }, description: 'p', required: false, sensitive: true, deprecated: true },
          ],
          operations: [{ operation: 'read', summary: 'r', description: 'long' }, { operation: 'update', summary: 'u' }],
          existenceCheck: true,
          synopsis: 'syn',
          description: 'desc',
          unauthenticated: true,
        },
      ],
    };
    const svc = (loadProtos().Backend.service as unknown as Record<string, { responseSerialize(v: unknown): Buffer; responseDeserialize(b: Buffer): { describe: never } }>).Setup;
    const back = svc!.responseDeserialize(svc!.responseSerialize({ describe: encodeDescription(d) }));
    expect(decodeDescription(back.describe)).toEqual(d);
  });
});

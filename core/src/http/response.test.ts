import { StrongroomError, notFound } from '@strongroom/sdk-plugin/host';
import { envelope, errorReply, renderReply, replyForError } from './response.js';

describe('envelope', () => {
  it("has Vault's exact keys and defaults", () => {
    const e = envelope({ requestId: 'r1', data: { keys: ['a'] } });
    expect(JSON.stringify(e)).toBe(
      '{"request_id":"r1","lease_id":"","renewable":false,"lease_duration":0,"data":{"keys":["a"]},"wrap_info":null,"warnings":null,"auth":null,"mount_type":""}',
    );
  });

  it('carries lease, auth, warnings and mount type', () => {
    const e = envelope({
      requestId: 'r2',
      leaseId: 'database/creds/ro/abc',
      renewable: true,
      leaseDuration: 3600,
      auth: { client_token: 't' },
      warnings: ['w'],
      mountType: 'database',
    });
    expect(e).toMatchObject({ lease_id: 'database/creds/ro/abc', renewable: true, lease_duration: 3600, auth: { client_token: 't' }, warnings: ['w'], mount_type: 'database', data: null });
    expect(envelope({ requestId: 'r', warnings: [] }).warnings).toBeNull();
  });
});

describe('replies', () => {
  const log = { error: jest.fn() };

  it('maps typed errors to their status and messages, others to a generic 500', () => {
    expect(replyForError(notFound('no such key'), log, 'r')).toEqual(errorReply(404, ['no such key']));
    expect(replyForError(new StrongroomError('coded', 'teapot', { status: 418 }), log, 'r').status).toBe(418);
    expect(log.error).not.toHaveBeenCalled();
    expect(replyForError(new Error('secret detail'), log, 'r9')).toEqual({ status: 500, body: { errors: ['internal error'] } });
    expect(log.error).toHaveBeenCalledWith('request failed', expect.objectContaining({ requestId: 'r9', error: expect.stringContaining('secret detail') }));
  });

  it('renders JSON with length and no-store, no body for 204 and HEAD', () => {
    const r = renderReply({ status: 200, body: { a: 'é' } }, false);
    expect(r.headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Content-Length': 10 });
    expect(r.body?.toString()).toBe('{"a":"é"}');
    const head = renderReply({ status: 200, body: { a: 1 } }, true);
    expect(head.body).toBeNull();
    expect(head.headers['Content-Length']).toBe(7);
    const empty = renderReply({ status: 204, body: { ignored: true } }, false);
    expect(empty.body).toBeNull();
    expect(empty.headers['Content-Type']).toBeUndefined();
  });

  it('renders raw bodies with their content type and lets headers be added', () => {
    const r = renderReply({ status: 200, body: { raw: Buffer.from('pk'), contentType: 'text/plain' }, headers: { 'X-Extra': '1' } }, false);
    expect(r.headers).toMatchObject({ 'Content-Type': 'text/plain', 'X-Extra': '1', 'Content-Length': 2 });
    expect(r.body?.toString()).toBe('pk');
  });
});

/**
 * Password policies end to end through the real binary: sys/policies/password
 * create (plain and base64), read, list, generate, delete; unsatisfiable and
 * malformed documents refused with a 400 naming the problem; ACL on the sys paths.
 */
import { startDevServer, type RunningServer } from '../helpers/server';

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const SYMBOLS = '!@#$%^&*';
const STRICT = `length = 24
rule "charset" {
  charset = "${LOWER}"
  min-chars = 2
}
rule "charset" {
  charset = "${UPPER}"
  min-chars = 3
}
rule "charset" {
  charset = "${DIGITS}"
  min-chars = 4
}
rule "charset" {
  charset = "${SYMBOLS}"
  min-chars = 5
}
`;

const count = (pw: string, set: string) => Array.from(pw).filter((c) => set.includes(c)).length;

let s: RunningServer;
beforeAll(async () => {
  s = await startDevServer();
});
afterAll(async () => {
  await s.stop();
});

describe('sys/policies/password', () => {
  it('creates, reads, lists and generates passwords that satisfy every rule', async () => {
    expect((await s.api('PUT', 'sys/policies/password/strict', { policy: STRICT })).status).toBe(204);
    const read = await s.api('GET', 'sys/policies/password/strict');
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({ policy: STRICT });

    // A base64-encoded document is stored decoded.
    const pin = 'length = 6\nrule "charset" {\n  charset = "0123456789"\n  min-chars = 6\n}\n';
    expect((await s.api('POST', 'sys/policies/password/pin', { policy: Buffer.from(pin).toString('base64') })).status).toBe(204);
    expect((await s.api('GET', 'sys/policies/password/pin')).body.data.policy).toBe(pin);

    const list = await s.api('LIST', 'sys/policies/password');
    expect(list.status).toBe(200);
    expect(list.body.data.keys).toEqual(['pin', 'strict']);
    expect((await s.api('GET', 'sys/policies/password?list=true')).body.data.keys).toEqual(['pin', 'strict']);

    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const r = await s.api('GET', 'sys/policies/password/strict/generate');
      expect(r.status).toBe(200);
      const pw = r.body.data.password as string;
      expect(pw).toHaveLength(24);
      expect(Array.from(pw).every((c) => (LOWER + UPPER + DIGITS + SYMBOLS).includes(c))).toBe(true);
      expect(count(pw, LOWER)).toBeGreaterThanOrEqual(2);
      expect(count(pw, UPPER)).toBeGreaterThanOrEqual(3);
      expect(count(pw, DIGITS)).toBeGreaterThanOrEqual(4);
      expect(count(pw, SYMBOLS)).toBeGreaterThanOrEqual(5);
      seen.add(pw);
    }
    expect(seen.size).toBe(50);
    expect((await s.api('GET', 'sys/policies/password/pin/generate')).body.data.password).toMatch(/^[0-9]{6}$/);
  });

  it('refuses an unsatisfiable policy with a 400 that says why, and saves nothing', async () => {
    const r = await s.api('PUT', 'sys/policies/password/impossible', {
      policy: `length = 5\nrule "charset" {\n  charset = "abc"\n  min-chars = 3\n}\nrule "charset" {\n  charset = "123"\n  min-chars = 3\n}\n`,
    });
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toMatch(/min-chars add up to 6, more than length 5/);
    expect((await s.api('GET', 'sys/policies/password/impossible')).status).toBe(404);
  });

  it.each([
    ['missing policy', {}, /policy: missing required parameter/],
    ['length out of range', { policy: 'length = 2\nrule "charset" { charset = "abc" }' }, /policy: length: must be between 4 and 100/],
    ['no rules', { policy: 'length = 10' }, /at least one rule "charset"/],
    ['unknown rule type', { policy: 'length = 10\nrule "regex" { pattern = "a" }' }, /unknown rule type/],
    ['HCL syntax error', { policy: 'length = = 3' }, /policy/],
  ])('refuses %s with a 400 naming the field', async (_n, body, message) => {
    const r = await s.api('PUT', 'sys/policies/password/bad', body);
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toMatch(message);
  });

  it('answers 404 for an unknown policy on read and generate, and deletes', async () => {
    expect((await s.api('GET', 'sys/policies/password/nope')).status).toBe(404);
    expect((await s.api('GET', 'sys/policies/password/nope/generate')).status).toBe(404);
    await s.api('PUT', 'sys/policies/password/gone', { policy: 'length = 8\nrule "charset" { charset = "ab" }' });
    expect((await s.api('DELETE', 'sys/policies/password/gone')).status).toBe(204);
    expect((await s.api('GET', 'sys/policies/password/gone')).status).toBe(404);
    expect((await s.api('LIST', 'sys/policies/password')).body.data.keys).not.toContain('gone');
  });

  it('is governed by ACLs on the sys paths: generate allowed does not mean write allowed', async () => {
    await s.api('PUT', 'sys/policies/acl/gen-only', { policy: 'path "sys/policies/password/+/generate" { capabilities = ["read"] }' });
    const token = (await s.api('POST', 'auth/token/create', { policies: ['gen-only'] })).body.auth.client_token as string;
    expect((await s.api('GET', 'sys/policies/password/pin/generate', undefined, { token })).status).toBe(200);
    expect((await s.api('GET', 'sys/policies/password/pin', undefined, { token })).status).toBe(403);
    expect((await s.api('PUT', 'sys/policies/password/pin', { policy: 'length = 4\nrule "charset" { charset = "a" }' }, { token })).status).toBe(403);
    expect((await s.api('GET', 'sys/policies/password/pin/generate')).body.data.password).toMatch(/^[0-9]{6}$/);
  });
});

import { transitTest } from './paths/test-backend.js';

describe('transit backend description', () => {
  it('describes every path with JSON Schema fields (help and OpenAPI come from it)', async () => {
    const t = await transitTest();
    const d = t.backend.describe();
    const patterns = d.paths.map((p) => p.pattern);
    for (const p of ['keys', 'keys/:name', 'encrypt/:name', 'decrypt/:name', 'hash{/:algorithm}', 'export/:key_type/:name{/:version}', 'wrapping_key']) {
      expect(patterns).toContain(p);
    }
    const encrypt = d.paths.find((p) => p.pattern === 'encrypt/:name')!;
    expect(encrypt.existenceCheck).toBe(true);
    expect(encrypt.fields.find((f) => f.name === 'plaintext')?.sensitive).toBe(true);
    expect(() => JSON.stringify(d)).not.toThrow();
    const help = await t.help('encrypt/k');
    expect(JSON.stringify(help?.data)).toContain('encrypt');
  });

  it('unknown paths are 404 and wrong operations 405', async () => {
    const t = await transitTest();
    await expect(t.read('nope')).rejects.toMatchObject({ status: 404 });
    await expect(t.read('encrypt/k')).rejects.toMatchObject({ status: 405 });
  });
});

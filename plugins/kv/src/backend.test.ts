import { createTestBackend, toOpenApi, helpFor } from '@strongroom/sdk-plugin';
import { createKvBackend, kvBackend } from './index.js';

describe('kv backend', () => {
  it('defaults to version 1 and refuses unknown versions', async () => {
    const v1 = await createTestBackend(kvBackend, { mount: { options: {} } });
    expect(v1.backend.describe().paths.map((p) => p.pattern)).toEqual(['*path']);
    await expect(createTestBackend(kvBackend, { mount: { options: { version: '3' } } })).rejects.toThrow('kv version must be 1 or 2');
  });

  it('generates a stable OpenAPI document (snapshot: review API drift here)', async () => {
    const v2 = await createTestBackend(createKvBackend(), { mount: { path: 'secret/', options: { version: '2' } } });
    const v1 = await createTestBackend(createKvBackend(), { mount: { path: 'kv/', options: {} } });
    const doc = toOpenApi(
      [
        { prefix: 'secret/', description: v2.backend.describe() },
        { prefix: 'kv/', description: v1.backend.describe() },
      ],
      { title: 'kv', version: '1' },
    );
    expect(doc).toMatchSnapshot();
  });

  it('answers help for a secret path', async () => {
    const v2 = await createTestBackend(createKvBackend(), { mount: { path: 'secret/', options: { version: '2' } } });
    const h = helpFor(v2.backend.describe(), 'data/app/db');
    expect(h.help).toContain('Matching Route: data/*path');
    expect(Object.keys(h.openapi.paths)).toEqual(['/']);
    expect(h.openapi.paths['/']).toHaveProperty('patch');
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('protocol.json', () => {
  it('is the compiled form of proto/*.proto (run node scripts/proto-json.js after changing a .proto)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { descriptor, out } = require(join(__dirname, '../../../scripts/proto-json.js')) as { descriptor(): string; out: string };
    expect(readFileSync(out, 'utf8')).toBe(descriptor());
  });
});

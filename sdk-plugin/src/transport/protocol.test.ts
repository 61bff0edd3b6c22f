import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('protocol.json and wire.ts', () => {
  it('are generated from proto/*.proto (run node scripts/proto-json.js after changing a .proto)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const gen = require(join(__dirname, '../../../scripts/proto-json.js')) as { descriptor(): string; wireTypes(): string; out: string; typesOut: string };
    expect(readFileSync(gen.out, 'utf8')).toBe(gen.descriptor());
    expect(readFileSync(gen.typesOut, 'utf8')).toBe(gen.wireTypes());
  });
});

/** Test helper: one transit mount in the in-process harness, with an injectable clock. */
import { createTestBackend, type TestBackend } from '@strongroom/sdk-plugin/testing';
import { createTransitFactory } from '../backend.js';

export interface TransitTest extends TestBackend {
  clock: { now: number };
}

export async function transitTest(): Promise<TransitTest> {
  const clock = { now: Date.UTC(2026, 0, 1) };
  const t = await createTestBackend(createTransitFactory({ now: () => clock.now }), { mount: { path: 'transit/', type: 'transit' } });
  return Object.assign(t, { clock });
}

export const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

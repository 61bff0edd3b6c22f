/** "key=value" lines, as a form takes mount and audit options, to an object and back. */
export function parseKeyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t) continue;
    const i = t.indexOf('=');
    if (i <= 0) throw new Error(`Options: "${t}" is not key=value`);
    out[t.slice(0, i).trim()] = t.slice(i + 1).trim();
  }
  return out;
}

/** An options object as one line ("k=v, k2=v2"), as the mount and audit tables show it. */
export function formatKeyValues(options: Record<string, unknown> | undefined): string {
  return Object.entries(options ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
}

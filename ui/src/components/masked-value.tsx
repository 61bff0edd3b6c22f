import { useState } from 'preact/hooks';
import { announce } from './announcer';

/** A secret value, masked until revealed; copyable either way. */
export function MaskedValue({ value, label }: { value: string; label: string }) {
  const [shown, setShown] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(value).catch(() => undefined);
    announce(`Copied ${label}`);
  };
  return (
    <span class="masked">
      <code aria-label={shown ? undefined : `${label} (hidden)`}>{shown ? value : '••••••••'}</code>
      <button type="button" class="small" aria-pressed={shown} onClick={() => setShown(!shown)}>
        {shown ? 'Hide' : 'Reveal'}
      </button>
      <button type="button" class="small" onClick={copy}>
        Copy
      </button>
    </span>
  );
}

import { useState } from 'preact/hooks';

/** A destructive action asked twice: "Disable", then "Confirm disable" or "Cancel". */
/** `label` is what the button says; `name`, when given, is its accessible name (several "Disable" buttons in a table each name their row). */
export function ConfirmButton({ label, name, onConfirm, disabled }: { label: string; name?: string; onConfirm: () => void | Promise<void>; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  const what = name ?? label;
  const confirmName = `Confirm ${what[0]!.toLowerCase()}${what.slice(1)}`;
  if (!asking) {
    return (
      <button type="button" class="danger" aria-label={name} disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={confirmName}>
      <button
        type="button"
        class="danger"
        aria-label={name ? confirmName : undefined}
        autoFocus
        onClick={async () => {
          setAsking(false);
          await onConfirm();
        }}
      >
        {`Confirm ${label.toLowerCase()}`}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

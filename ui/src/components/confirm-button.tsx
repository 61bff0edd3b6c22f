import { useState } from 'preact/hooks';

/** A destructive action asked twice: "Disable", then "Confirm disable" or "Cancel". */
export function ConfirmButton({ label, onConfirm, disabled }: { label: string; onConfirm: () => void | Promise<void>; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={`Confirm ${label.toLowerCase()}`}>
      <button
        type="button"
        class="danger"
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

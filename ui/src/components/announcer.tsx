/** One polite live region for the whole app: `announce()` says what just happened ("Saved"). */
import { useEffect, useState } from 'preact/hooks';

let setMessage: ((m: string) => void) | null = null;

export function announce(message: string): void {
  setMessage?.(message);
}

export function Announcer() {
  const [message, set] = useState('');
  useEffect(() => {
    // A repeated message is announced again: clear first, then set.
    setMessage = (m) => {
      set('');
      setTimeout(() => set(m), 30);
    };
    return () => void (setMessage = null);
  }, []);
  return (
    <p role="status" class="announcer">
      {message}
    </p>
  );
}

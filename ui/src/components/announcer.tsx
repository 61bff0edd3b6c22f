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
    let clear: ReturnType<typeof setTimeout> | undefined;
    setMessage = (m) => {
      set('');
      clearTimeout(clear);
      setTimeout(() => set(m), 30);
      // Said once; it does not stay on screen.
      clear = setTimeout(() => set(''), 8000);
    };
    return () => {
      clearTimeout(clear);
      setMessage = null;
    };
  }, []);
  return (
    <p role="status" class="announcer">
      {message}
    </p>
  );
}

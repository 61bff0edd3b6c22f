/** The keys of a list path, a page at a time (`after`/`limit`), with Previous and Next page buttons. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';

const PAGE_SIZE = 50;

export function usePagedKeys(path: string): { keys: string[] | null; error: unknown; pager: preact.JSX.Element } {
  // The `after` of each page shown so far: the last is the current page.
  const [pages, setPages] = useState<string[]>(['']);
  const [state, setState] = useState<{ keys: string[] | null; error: unknown }>({ keys: null, error: null });
  const after = pages[pages.length - 1]!;
  useEffect(() => setPages(['']), [path]);
  useEffect(() => {
    let live = true;
    setState({ keys: null, error: null });
    api.list(path, { after: after || undefined, limit: PAGE_SIZE }).then(
      (r) => live && setState({ keys: r.keys, error: null }),
      (error: unknown) => live && setState({ keys: null, error }),
    );
    return () => void (live = false);
  }, [path, after]);
  const keys = state.keys;
  const pager = (
    <div class="actions">
      {pages.length > 1 && (
        <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
          Previous page
        </button>
      )}
      {keys && keys.length === PAGE_SIZE && (
        <button type="button" onClick={() => setPages([...pages, keys[keys.length - 1]!])}>
          Next page
        </button>
      )}
    </div>
  );
  return { keys, error: state.error, pager };
}

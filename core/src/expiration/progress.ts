/**
 * Progress lines of the long lease operations (restore at unseal, tidy,
 * revoke-prefix): one every PROGRESS_EVERY items or every `everyMs`,
 * whichever comes first, at info, so an operator watching sys/monitor sees
 * them move.
 */
import type { Logger } from '@strongroom/sdk-plugin/host';

const PROGRESS_EVERY = 1000;

/** Counts one item per call and logs `message` with `fields()` when a line is due. */
export function progressLine(logger: Pick<Logger, 'info'>, message: string, everyMs: number, fields: () => Record<string, unknown>): () => void {
  let n = 0;
  let last = performance.now();
  return () => {
    if (++n % PROGRESS_EVERY !== 0 && performance.now() - last < everyMs) return;
    last = performance.now();
    logger.info(message, fields());
  };
}

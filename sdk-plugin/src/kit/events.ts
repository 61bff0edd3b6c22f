/**
 * Publishing a change event after the change is made: the change stands
 * whatever happens to its event, so a failure to publish (the core
 * refused the event, the stream to it broke) is logged, never thrown.
 */
import type { EventMetadata, Logger, SystemView } from '../system-view.js';

export async function publishEvent(env: { system: Pick<SystemView, 'sendEvent'>; logger: Pick<Logger, 'warn'> }, type: string, path: string, metadata: EventMetadata = {}): Promise<void> {
  try {
    await env.system.sendEvent(type, path, metadata);
  } catch (err) {
    env.logger.warn('could not publish a change event', { event_type: type, error: err instanceof Error ? err.message : String(err) });
  }
}

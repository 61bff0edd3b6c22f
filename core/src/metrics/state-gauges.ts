/** The gauges that describe state, read from their owners at each scrape. */
import type { ExpirationManager } from '../expiration/index.js';
import type { HaManager } from '../ha/ha-manager.js';
import type { PluginSupervisor } from '../supervisor/supervisor.js';
import type { TokenStore } from '../token/index.js';
import type { Metrics } from './metrics.js';

export interface StateSources {
  /** Null while sealed (or an HA standby). */
  unsealed(): { expiration: ExpirationManager; supervisor: PluginSupervisor; tokens: TokenStore; quotas: { scrape(): void } } | null;
  sealed(): boolean;
  ha: HaManager | null;
  /** A namespace id as a metric label: its path, "root", or the id once the namespace is gone. */
  namespaceLabel(id: string): string;
}

export function scrapeStateGauges(metrics: Metrics, src: StateSources): void {
  let tokenCounts: { at: number; counts: Array<{ type: string; namespaceId: string; count: number }> } | null = null;
  metrics.onScrape(async () => {
    const s = src.unsealed();
    metrics.leases.reset();
    metrics.pluginUp.reset();
    metrics.pluginDegraded.reset();
    metrics.vault.tokenCount.reset();
    metrics.quotaLeaseCount.reset();
    metrics.quotaLeaseCountMax.reset();
    if (!s) return;
    s.quotas.scrape();
    let leases = 0;
    for (const m of s.expiration.countByMount()) {
      metrics.leases.set({ mount: m.mountPath, namespace: src.namespaceLabel(m.namespaceId) }, m.count);
      leases += m.count;
    }
    metrics.vault.numLeases.set(leases);
    const irrevocable = s.expiration.stats().irrevocable;
    metrics.irrevocableLeases.set(irrevocable);
    metrics.vault.numIrrevocableLeases.set(irrevocable);
    for (const p of s.supervisor.stats()) {
      metrics.pluginUp.set({ plugin: p.plugin, version: p.version }, p.state === 'running' ? 1 : 0);
      metrics.pluginDegraded.set({ plugin: p.plugin, version: p.version }, p.state === 'degraded' ? 1 : 0);
    }
    // Counting tokens scans their entries: at most once a minute, as Vault's usage gauges are periodic too.
    if (!tokenCounts || Date.now() - tokenCounts.at > 60_000) tokenCounts = { at: Date.now(), counts: await s.tokens.countTokens() };
    metrics.tokens.reset();
    for (const c of tokenCounts.counts) {
      const namespace = src.namespaceLabel(c.namespaceId);
      metrics.tokens.set({ type: c.type, namespace }, c.count);
      metrics.vault.tokenCount.inc({ namespace }, c.count);
    }
  });
  metrics.onScrape(() => {
    const sealed = src.sealed();
    metrics.unsealed.set(sealed ? 0 : 1);
    metrics.active.set(sealed || (src.ha !== null && src.ha.state !== 'active') ? 0 : 1);
    metrics.haEnabled.set(src.ha ? 1 : 0);
  });
}

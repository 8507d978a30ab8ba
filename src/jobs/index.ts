import type { Container } from "../container.js";
import type { OidcRuntime } from "../oidc/index.js";

/** Runs `fn` every `intervalMs`, never overlapping itself; errors are logged, not fatal. */
function every(container: Container, name: string, intervalMs: number, fn: () => Promise<unknown>) {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    const started = performance.now();
    let ok = false;
    try {
      await fn();
      ok = true;
    } catch (err) {
      container.logger.error({ err, job: name }, "job failed");
    } finally {
      running = false;
      container.metrics?.jobRun(name, ok, (performance.now() - started) / 1000);
    }
  };
  // A tick catches and logs its own failure: nothing to await.
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Background work. The outbox worker needs no lock: rows are claimed with SKIP LOCKED, so every
 * instance can drain concurrently. Jobs that must run once per cluster take an advisory lock.
 */
export function startJobs(container: Container, oidc: OidcRuntime): () => void {
  const stops = [
    every(container, "email-outbox", container.config.email.workerIntervalMs, () => container.services.email.drain()),
    // Hourly by default: idempotent (each reminder step goes out once), and an advisory lock keeps it to one instance.
    every(container, "mfa-compliance", container.config.mfa.complianceIntervalMs, () => container.services.mfaPolicy.runCompliance()),
    // Expired codes, tokens, sessions and interactions: a plain delete, safe on every instance.
    every(container, "oidc-purge", container.config.oidc.purgeIntervalMs, () => container.services.oidcClients.purgeExpired()),
    // Key rotation takes an advisory lock; every instance also picks up keys another one rotated.
    every(container, "oidc-keys", container.config.oidc.keyCheckIntervalMs, () => oidc.maintain()),
    // Every minute on one instance (a lease row): controllers brought in line with Keyward's decisions.
    every(container, "network-reconcile", container.config.networks.reconcileIntervalMs, () => container.services.networkReconcile.tick()),
    // Audit records hash-chained and heads signed in insertion order, one instance at a time (advisory lock).
    every(container, "audit-chain", container.config.audit.chainIntervalMs, () => container.services.auditChain.tick()),
    // Verified domains whose re-check is due, each claimed by one instance (a lease on the row).
    every(container, "domain-recheck", container.config.domains.tickMs, () => container.services.domains.recheckDue()),
    // SAML connections' IdP metadata re-read from its URL (due ones only: every 12 h each); safe on every instance (idempotent).
    every(container, "saml-metadata", 15 * 60 * 1000, () => container.services.samlMetadata.refreshDue()),
  ];
  return () => stops.forEach((stop) => stop());
}

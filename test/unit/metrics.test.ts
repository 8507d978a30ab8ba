import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";
import { createMetrics } from "../../src/infra/metrics.js";
import { AuditAction } from "../../src/modules/audit/audit.actions.js";
import { auditMetricsObserver } from "../../src/modules/audit/audit-metrics.js";

describe("metrics configuration", () => {
  it("is off unless a port or a token is set", () => {
    expect(loadConfig({}).metrics).toMatchObject({ enabled: false, port: undefined, token: undefined });
    expect(loadConfig({ METRICS_PORT: "9464" }).metrics).toMatchObject({ enabled: true, port: 9464, host: "127.0.0.1" });
    expect(loadConfig({ METRICS_PORT: "9464", HOST: "0.0.0.0" }).metrics.host).toBe("0.0.0.0");
    expect(loadConfig({ METRICS_PORT: "9464", METRICS_HOST: "10.0.0.2" }).metrics.host).toBe("10.0.0.2");
    expect(loadConfig({ METRICS_TOKEN: "t".repeat(32) }).metrics).toMatchObject({ enabled: true, port: undefined });
  });

  it("refuses a short token and the main port", () => {
    expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ PORT: "8080", METRICS_PORT: "8080" })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ METRICS_PORT: "70000" })).toThrow(/METRICS_PORT/);
  });
});

describe("outcome labels from audit records", () => {
  it("only ever uses values from fixed lists", async () => {
    const metrics = createMetrics({ version: "test", defaultMetrics: false });
    const observe = auditMetricsObserver(metrics);
    observe(AuditAction.userLogin, { metadata: { method: "evil-method-<script>" } });
    observe(AuditAction.userLoginFailed, { success: false, metadata: { email: "a@b.example", reason: "weird" } });
    observe(AuditAction.oidcError, { success: false, metadata: { route: "token", error: "Not An OAuth Code!", grant_type: "urn:x:made-up" } });
    observe(AuditAction.oidcError, { success: false, metadata: { route: "authorization", error: "invalid_request" } });
    observe(AuditAction.certFailed, { success: false, errorMessage: "internal error" });
    observe(AuditAction.certFailed, { success: false, errorMessage: "EXPIRY_TOO_LONG: at most 8 hours" });
    const text = (await metrics.scrape()).body;
    expect(text).toContain('keyward_sign_ins_total{method="other",result="success"} 1');
    expect(text).toContain('keyward_sign_ins_total{method="password",result="account_unavailable"} 1');
    expect(text).toContain('keyward_oidc_tokens_total{grant_type="other",result="other"} 1');
    expect(text).toContain('keyward_ssh_certificates_total{result="failed",reason="other"} 1');
    expect(text).toContain('keyward_ssh_certificates_total{result="failed",reason="EXPIRY_TOO_LONG"} 1');
    expect(text).not.toMatch(/script|a@b|made-up|An OAuth|invalid_request/);
  });
});

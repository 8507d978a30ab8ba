import type { Metrics } from "../../infra/metrics.js";
import { AuditAction } from "./audit.actions.js";
import type { AuditObserver } from "./audit.service.js";

/**
 * Outcome counters, fed from the one place every outcome is already written down: the audit log.
 * Each label value is picked from a fixed list (anything else becomes "other"), so a client can
 * never mint a new series: no e-mail address, subject, id or free text reaches a label.
 */

const FIRST_FACTORS = new Set(["password", "passkey", "cli", "github", "google"]);
const SECOND_FACTORS = new Set(["totp", "backup_code", "webauthn"]);
const GRANT_TYPES = new Set([
  "authorization_code",
  "refresh_token",
  "client_credentials",
  "urn:ietf:params:oauth:grant-type:device_code",
  "urn:ietf:params:oauth:grant-type:token-exchange",
  "urn:openid:params:grant-type:ciba",
]);
const SNAKE = /^[a-z][a-z0-9_]{0,39}$/;
const UPPER_SNAKE = /^[A-Z][A-Z0-9_]{0,63}$/;

const pick = (value: unknown, allowed: Set<string>): string => (typeof value === "string" && allowed.has(value) ? value : "other");
const shaped = (value: unknown, shape: RegExp): string => (typeof value === "string" && shape.test(value) ? value : "other");

export function auditMetricsObserver(metrics: Metrics): AuditObserver {
  return (action, details) => {
    const meta = details.metadata ?? {};
    metrics.audit.inc({ action, success: details.success === false ? "false" : "true" });
    switch (action) {
      case AuditAction.userLogin: {
        // "password+totp": the first factor signed in, the second one was verified.
        const [first, second] = String(meta.method ?? "").split("+");
        metrics.signIns.inc({ method: pick(first, FIRST_FACTORS), result: "success" });
        if (second) metrics.mfa.inc({ method: pick(second, SECOND_FACTORS), result: "success" });
        return;
      }
      case AuditAction.userLoginMfaRequired:
        metrics.signIns.inc({ method: pick(meta.first_factor, FIRST_FACTORS), result: "mfa_required" });
        return;
      case AuditAction.userLoginFailed:
        metrics.signIns.inc({ method: "password", result: meta.reason === "invalid_credentials" ? "invalid_credentials" : "account_unavailable" });
        return;
      case AuditAction.externalLoginFailed:
        metrics.signIns.inc({ method: pick(meta.provider, FIRST_FACTORS), result: "failure" });
        return;
      case AuditAction.mfaVerifyFailed:
        metrics.mfa.inc({ method: pick(meta.method, SECOND_FACTORS), result: "failure" });
        return;
      case AuditAction.webauthnLoginFailed:
        metrics.mfa.inc({ method: "webauthn", result: "failure" });
        return;
      case AuditAction.webauthnCounterRegression:
        metrics.mfa.inc({ method: "webauthn", result: "counter_regression" });
        return;
      case AuditAction.certIssued:
        metrics.certificates.inc({ result: "issued", reason: "none" });
        return;
      case AuditAction.certFailed:
        // errorMessage is "<CODE>: <message>" for refusals, "internal error" otherwise.
        metrics.certificates.inc({ result: "failed", reason: shaped(details.errorMessage?.split(":")[0], UPPER_SNAKE) });
        return;
      case AuditAction.oidcTokenIssued:
        metrics.oidcTokens.inc({ grant_type: pick(meta.grant_type, GRANT_TYPES), result: "issued" });
        return;
      case AuditAction.oidcRefreshReuse:
        metrics.oidcTokens.inc({ grant_type: "refresh_token", result: "refresh_token_reuse" });
        return;
      case AuditAction.oidcError:
        if (meta.route === "token") metrics.oidcTokens.inc({ grant_type: pick(meta.grant_type, GRANT_TYPES), result: shaped(meta.error, SNAKE) });
        return;
      default:
        return;
    }
  };
}

import { Link } from "@tanstack/react-router";
import type { MyOrganization } from "../../shell";
import { Badge } from "../../ui/Badge";
import "./ssh.css";

/** The SSH screens' own navigation (admins see four; others only the first, so it is not shown). */
export function SshTabs({ org }: { org: MyOrganization }) {
  const tabs = [
    { to: "/orgs/$slug/ssh", label: "Authorities and servers", exact: true },
    { to: "/orgs/$slug/ssh/certificates", label: "Certificates", exact: false },
    { to: "/orgs/$slug/ssh/hosts", label: "Host certificates", exact: false },
    { to: "/orgs/$slug/ssh/servers", label: "Enrolled servers", exact: false },
  ] as const;
  return (
    <nav className="ssh-tabs" aria-label="SSH sections">
      <ul>
        {tabs.map((t) => (
          <li key={t.to}>
            <Link to={t.to} params={{ slug: org.slug }} activeOptions={{ exact: t.exact }} activeProps={{ "aria-current": "page", className: "active" }}>
              {t.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

const STATUS: Record<string, ["good" | "neutral" | "bad", string]> = {
  active: ["good", "valid"],
  expired: ["neutral", "expired"],
  revoked: ["bad", "revoked"],
  retired: ["bad", "retired"],
};

/** A certificate's status in words. */
export function CertStatus({ status }: { status: string }) {
  const [tone, words] = STATUS[status] ?? ["neutral", status];
  return <Badge tone={tone}>{words}</Badge>;
}

/** "8 hours", "1 hour", "30 days" for whole days. */
export function hours(n: number): string {
  if (n >= 48 && n % 24 === 0) return `${n / 24} days`;
  return n === 1 ? "1 hour" : `${n} hours`;
}

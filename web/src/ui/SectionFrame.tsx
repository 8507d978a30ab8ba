import { Link, Outlet, type LinkProps } from "@tanstack/react-router";
import type { ReactNode } from "react";

export interface Section {
  to: LinkProps["to"];
  label: string;
  /** Active only at exactly this address (an area's first section, whose address prefixes the others'). */
  exact?: boolean;
}

/**
 * The frame of an area (an organization, your account, the operators' pages): its sections'
 * navigation beside the screen, the current one marked for screen readers (aria-current) and
 * for the eye. On a phone the navigation sits above the screen.
 */
export function SectionFrame({ label, heading, sections, params, className }: { label: string; heading: ReactNode; sections: readonly Section[]; params?: Record<string, string>; className?: string }) {
  return (
    <div className={["org", className].filter(Boolean).join(" ")}>
      <nav className="org-nav" aria-label={label}>
        <div className="org-name">{heading}</div>
        <ul>
          {sections.map((n) => (
            <li key={String(n.to)}>
              <Link to={n.to} params={params as never} activeOptions={{ exact: !!n.exact }} activeProps={{ "aria-current": "page", className: "active" }}>
                {n.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="org-content">
        <Outlet />
      </div>
    </div>
  );
}

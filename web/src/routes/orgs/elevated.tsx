import { Link } from "@tanstack/react-router";
import type { ReactNode } from "react";
import type { MyOrganization } from "../../shell";
import { isTemporaryAdmin } from "./layout";

const clock = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit" });
const dated = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const sameDay = (a: Date, b: Date) => a.toDateString() === b.toDateString();

/**
 * A temporary admin's notice (issue 37): their admin role ends with the grant they requested, and
 * the actions it never confers are not shown. A quiet note (not an alert): nothing is wrong. On a
 * screen made only of such actions it stands in place of them, saying what the screen is for.
 * Renders nothing for anyone else.
 */
export function ElevatedNotice({ org, children }: { org: MyOrganization; children?: ReactNode }) {
  if (!isTemporaryAdmin(org) || !org.elevatedUntil) return null;
  const until = new Date(org.elevatedUntil);
  const when = sameDay(until, new Date()) ? clock.format(until) : dated.format(until);
  return (
    <div className="notice elevated-notice">
      <p>
        You are an admin until{" "}
        <time dateTime={org.elevatedUntil} title={dated.format(until)}>
          {when}
        </time>{" "}
        (requested access). Some actions need a lasting admin role.
      </p>
      {children && <p>{children}</p>}
      <p>
        <Link to="/" hash="access-requests">
          Your access requests
        </Link>
      </p>
    </div>
  );
}

/** A screen made only of what a temporary admin may not do: its title, and the notice in place of its controls. */
export function ElevatedOnly({ org, title, children }: { org: MyOrganization; title: string; children: ReactNode }) {
  return (
    <div className="page">
      <h1>{title}</h1>
      <ElevatedNotice org={org}>{children}</ElevatedNotice>
    </div>
  );
}

import { SectionFrame } from "../../ui/SectionFrame";
import { useShell } from "../../shell";
import "./account.css";

/** The account's sections, in the order a person looks for them. */
const NAV = [
  { to: "/account", label: "Profile", exact: true },
  { to: "/account/security", label: "Password and two-step" },
  { to: "/account/sessions", label: "Sessions" },
  { to: "/account/linked", label: "Linked accounts" },
  { to: "/account/organizations", label: "Organizations" },
  { to: "/account/ssh", label: "SSH keys" },
  { to: "/account/apps", label: "Applications" },
  { to: "/account/networks", label: "Network access" },
] as const;

/**
 * /account/…: the signed-in person's own account, with its navigation beside the screen (the same
 * frame as an organization's). Each screen reads what it shows through /graphql.
 */
export function AccountLayout() {
  const me = useShell().data?.me;
  return (
    <SectionFrame
      className="account"
      label="Account sections"
      heading={
        <>
          Your account
          {me && (
            <span className="account-email muted" title={me.email}>
              {me.email}
            </span>
          )}
        </>
      }
      sections={NAV}
    />
  );
}

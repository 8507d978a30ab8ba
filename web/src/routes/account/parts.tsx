import { useEffect, useRef, useState } from "react";
import { ApiError } from "../../api";
import { Button } from "../../ui/Button";

/** Refusals of the current password: shown at the form's password field. */
const PASSWORD_CODES = new Set(["CURRENT_PASSWORD_INCORRECT", "PASSWORD_REQUIRED"]);

/**
 * The API's validation messages by field, from a mutation's error (none for other failures). A
 * refused current password belongs to the password field, whichever name the form gives it.
 */
export const fieldsOf = (error: unknown): Record<string, string> => {
  if (!(error instanceof ApiError)) return {};
  if (PASSWORD_CODES.has(error.code)) return { password: error.message, currentPassword: error.message };
  return error.fieldErrors;
};

/** A failure that is not about one of the form's own fields, to show above its buttons. */
export const generalError = (error: unknown, fields: readonly string[]): unknown => {
  const named = fieldsOf(error);
  return fields.some((f) => f in named) ? null : error;
};

/** Copies a text; says so, or says how when the browser refuses the clipboard. */
export function CopyButton({ text, label = "Copy", what }: { text: string; label?: string; what?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "refused">("idle");
  return (
    <Button
      variant="secondary"
      size="small"
      aria-label={what ? `${label} ${what}` : undefined}
      onPress={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState("copied");
        } catch {
          setState("refused");
        }
      }}
    >
      {state === "copied" ? "Copied" : state === "refused" ? "Select and copy it" : label}
    </Button>
  );
}

/**
 * New backup codes, shown this once: the person copies or writes them down, then dismisses them.
 * Focus moves here when they appear, so a keyboard or screen-reader user meets them first.
 */
export function BackupCodesPanel({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    box.current?.focus();
  }, [codes]);
  return (
    <section ref={box} className="codes-box" tabIndex={-1} aria-labelledby="backup-codes-title">
      <h3 id="backup-codes-title">Your new backup codes</h3>
      <p className="notice notice-warn">Store them somewhere safe now: they are not shown again, and any earlier codes no longer work. Each code works once.</p>
      <ul className="codes" aria-label="Backup codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="actions">
        <CopyButton text={codes.join("\n")} label="Copy codes" />
        <Button size="small" onPress={onDone}>
          I have stored them
        </Button>
      </div>
    </section>
  );
}

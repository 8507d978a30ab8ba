import { useId, useState } from "react";
import { Button } from "./Button";

/**
 * Text to paste elsewhere (a configuration line, a command, a certificate): labelled, shown whole
 * (it wraps at any character on a phone), with a Copy button whose result is announced.
 */
export function CopyText({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const [state, setState] = useState<"" | "copied" | "failed">("");
  const id = useId();
  return (
    <div className="copy-text" role="group" aria-labelledby={`${id}-label`}>
      <div className="copy-text-head">
        <span id={`${id}-label`} className="label">
          {label}
        </span>
        <Button
          variant="secondary"
          size="small"
          aria-label={`Copy ${label}`}
          onPress={async () => {
            try {
              await navigator.clipboard.writeText(value);
              setState("copied");
            } catch {
              setState("failed");
            }
          }}
        >
          Copy
        </Button>
        <span className="muted" role="status" aria-live="polite">
          {state === "copied" ? "Copied." : state === "failed" ? "Copying is not allowed here: select the text instead." : ""}
        </span>
      </div>
      {hint && <p className="hint">{hint}</p>}
      <pre className="copy-text-value">{value}</pre>
    </div>
  );
}

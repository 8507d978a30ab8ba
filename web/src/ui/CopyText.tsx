import { useId } from "react";
import { CopyButton } from "./CopyButton";

/**
 * Text to paste elsewhere (a configuration line, a command, a certificate): labelled, shown whole
 * (it wraps at any character on a phone), with a Copy button whose result is announced.
 */
export function CopyText({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const id = useId();
  return (
    <div className="copy-text" role="group" aria-labelledby={`${id}-label`}>
      <div className="copy-text-head">
        <span id={`${id}-label`} className="label">
          {label}
        </span>
        <CopyButton value={value} label={`Copy ${label}`} />
      </div>
      {hint && <p className="hint">{hint}</p>}
      <pre className="copy-text-value">{value}</pre>
    </div>
  );
}

import { useState } from "react";
import { Button } from "./Button";

/** A secret shown once (an API key, a client secret): copy it now, it will not be shown again. */
export function Secret({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret" role="group" aria-label={label}>
      <p className="notice notice-warn">Copy it now: it will not be shown again.</p>
      <code className="secret-value">{value}</code>
      <Button
        variant="secondary"
        size="small"
        onPress={async () => {
          await navigator.clipboard?.writeText(value).catch(() => undefined);
          setCopied(true);
        }}
      >
        {copied ? "Copied" : "Copy"}
      </Button>
    </div>
  );
}

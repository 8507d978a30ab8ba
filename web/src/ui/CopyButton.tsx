import { useState } from "react";
import { Button } from "./Button";

/** A Copy button named after what it copies (`label`), with its outcome announced beside it. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<"" | "copied" | "failed">("");
  return (
    <>
      <Button
        variant="secondary"
        size="small"
        aria-label={label}
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
    </>
  );
}

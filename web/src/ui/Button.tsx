import { Button as AriaButton, type ButtonProps as AriaButtonProps } from "react-aria-components";

export interface ButtonProps extends AriaButtonProps {
  variant?: "primary" | "secondary" | "danger" | "quiet";
  size?: "normal" | "small";
}

/**
 * The one button: primary by default. While `isPending` (its request runs) it keeps its focus and
 * ignores presses, marked aria-disabled; react-aria's own pending mode is not used, because its
 * announcements point at the button by id and dangle in the live region once the screen changes
 * (axe: role-img-alt). The outcome is announced by the screen's status message instead.
 */
export function Button({ variant = "primary", size = "normal", className, isPending, onPress, ...props }: ButtonProps) {
  const classes = ["btn", `btn-${variant}`, size === "small" ? "btn-small" : "", typeof className === "string" ? className : ""].filter(Boolean).join(" ");
  return <AriaButton {...props} onPress={isPending ? undefined : onPress} aria-disabled={isPending || undefined} data-pending={isPending || undefined} className={classes} />;
}

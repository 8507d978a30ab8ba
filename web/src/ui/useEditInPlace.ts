import { useEffect, useRef, useState } from "react";

/**
 * An object edited in place (a row or card that turns into its form): when editing ends, saved or
 * cancelled, focus goes back to the object's Edit button (marked `data-edit-trigger`) instead of
 * being lost with the form. Put `ref` on the element that holds both.
 */
export function useEditInPlace<T extends HTMLElement>() {
  const [editing, setEditing] = useState(false);
  const ref = useRef<T>(null);
  const was = useRef(false);
  useEffect(() => {
    if (was.current && !editing) ref.current?.querySelector<HTMLElement>("[data-edit-trigger]")?.focus();
    was.current = editing;
  }, [editing]);
  return { editing, setEditing, ref };
}

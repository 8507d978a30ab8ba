import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type ReactNode } from "react";
import { Button } from "../../ui/Button";
import { ConfirmDialog } from "../../ui/ConfirmDialog";
import { Empty } from "../../ui/States";

/**
 * What an organization's list screen (domains, single sign-on connections) does around its objects:
 * the last outcome to announce, the organization's data refreshed after a change, focus on an object
 * just added, and focus on the list's heading when a removed object took the focused button with it.
 */
export function useObjectList(orgId: string) {
  const qc = useQueryClient();
  const [done, setDone] = useState("");
  const [focusId, setFocusId] = useState<string | null>(null);
  const listHeading = useRef<HTMLHeadingElement>(null);
  // A removed object takes its Remove button (where the dialog would return focus) with it: focus
  // goes to the list's heading instead, once the dialog has let go of it (a frame after it closed).
  const [removals, setRemovals] = useState(0);
  useEffect(() => {
    if (removals === 0) return;
    const frame = requestAnimationFrame(() => {
      const lost = !document.activeElement || document.activeElement === document.body;
      if (lost) listHeading.current?.focus();
    });
    return () => cancelAnimationFrame(frame);
  }, [removals]);
  const changed = async (message: string) => {
    setDone(message);
    await qc.invalidateQueries({ queryKey: ["org", orgId] });
  };
  const removed = async (message: string) => {
    await changed(message);
    setRemovals((n) => n + 1);
  };
  return { done, changed, removed, focusId, setFocusId, listHeading };
}

/** An object's heading that takes focus when the object has just been added (the keyboard continues from it). */
export function useArrivalFocus(focus: boolean, onFocused: () => void) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (!focus) return;
    heading.current?.focus();
    onFocused();
  }, [focus, onFocused]);
  return heading;
}

/** A screen only the organization's owner and admins see: its title and who may see it. */
export function AdminsOnly({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="page">
      <h1>{title}</h1>
      <Empty>
        <p>{children}</p>
      </Empty>
    </div>
  );
}

/**
 * An object's Remove (or Delete) button behind a confirmation that names the object and says what
 * happens (`children`): "Remove example.com" opens "Remove the domain example.com?".
 */
export function RemoveAction({ verb, noun, name, onConfirm, children }: { verb: string; noun: string; name: string; onConfirm: () => Promise<void>; children: ReactNode }) {
  return (
    <ConfirmDialog
      trigger={
        <Button variant="secondary" aria-label={`${verb} ${name}`}>
          {verb}
        </Button>
      }
      title={`${verb} the ${noun} ${name}?`}
      confirmLabel={`${verb} ${noun}`}
      onConfirm={onConfirm}
    >
      {children}
    </ConfirmDialog>
  );
}

/** What an object in such a list is told by its screen. */
export interface ItemProps {
  orgId: string;
  orgName: string;
  /** Just added: its heading takes focus. */
  focus: boolean;
  onFocused: () => void;
  onDone: (message: string) => Promise<void>;
  onRemoved: (message: string) => Promise<void>;
}

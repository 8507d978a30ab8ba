import { useRef, useState, type ReactNode } from "react";
import { Dialog, DialogTrigger, Heading, Input, Label, Modal, ModalOverlay, TextField } from "react-aria-components";
import { Button } from "./Button";
import { FormError } from "./States";

export interface ConfirmDialogProps {
  /** The button that opens the dialog. */
  trigger: ReactNode;
  title: string;
  /** What will happen, naming the object. */
  children: ReactNode;
  confirmLabel: string;
  /** When set, the person types this (an organization's name) before the action is allowed. */
  typeToConfirm?: string;
  onConfirm: () => Promise<unknown>;
  danger?: boolean;
}

/** A destructive action behind a dialog that names what it does; focus returns to the trigger after. */
export function ConfirmDialog({ trigger, title, children, confirmLabel, typeToConfirm, onConfirm, danger = true }: ConfirmDialogProps) {
  const [typed, setTyped] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // Synchronous: a double press must not act twice before the re-render disables the button.
  const busy = useRef(false);
  return (
    <DialogTrigger onOpenChange={(open) => (open ? (setTyped(""), setError(null)) : undefined)}>
      {trigger}
      <ModalOverlay className="modal-overlay" isDismissable={!pending}>
        <Modal className="modal">
          <Dialog className="dialog" role="alertdialog">
            {({ close }) => (
              <>
                <Heading slot="title">{title}</Heading>
                <div className="dialog-body">{children}</div>
                {typeToConfirm && (
                  <TextField className="field" value={typed} onChange={setTyped} autoFocus>
                    <Label>
                      Type <strong>{typeToConfirm}</strong> to confirm
                    </Label>
                    <Input />
                  </TextField>
                )}
                <FormError error={error} />
                <div className="actions">
                  <Button variant="secondary" onPress={close} isDisabled={pending}>
                    Cancel
                  </Button>
                  <Button
                    variant={danger ? "danger" : "primary"}
                    isPending={pending}
                    isDisabled={!!typeToConfirm && typed !== typeToConfirm}
                    onPress={async () => {
                      if (busy.current) return;
                      busy.current = true;
                      setPending(true);
                      setError(null);
                      try {
                        await onConfirm();
                        close();
                      } catch (e) {
                        setError(e);
                      } finally {
                        busy.current = false;
                        setPending(false);
                      }
                    }}
                  >
                    {confirmLabel}
                  </Button>
                </div>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

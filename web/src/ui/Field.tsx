import { FieldError, Input, Label, Text, TextArea, TextField, type TextFieldProps } from "react-aria-components";

export interface FieldProps extends Omit<TextFieldProps, "children" | "isInvalid"> {
  label: string;
  description?: string;
  /** The API's message for this field, shown under it. */
  error?: string;
  multiline?: boolean;
  placeholder?: string;
}

/** A labelled text field; the API's validation message for it appears under it and marks it invalid. */
export function Field({ label, description, error, multiline, placeholder, ...props }: FieldProps) {
  return (
    // The API decides what is valid: its message shows here, and never blocks the next submission.
    <TextField {...props} isInvalid={!!error} validationBehavior="aria" className="field">
      <Label>{label}</Label>
      {multiline ? <TextArea placeholder={placeholder} /> : <Input placeholder={placeholder} />}
      {description && <Text slot="description" className="hint">{description}</Text>}
      <FieldError className="field-error">{error}</FieldError>
    </TextField>
  );
}

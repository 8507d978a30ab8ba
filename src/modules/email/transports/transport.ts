export interface OutgoingEmail {
  from: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  /** Stable per outbox row: providers that support it drop a duplicate delivery. */
  idempotencyKey: string;
}

export interface EmailTransport {
  readonly name: string;
  send(message: OutgoingEmail): Promise<{ messageId: string | null }>;
  close?(): Promise<void>;
}

/** A failure that retrying cannot fix (invalid recipient, rejected sender): the message is marked failed. */
export class PermanentEmailError extends Error {
  override name = "PermanentEmailError";
}

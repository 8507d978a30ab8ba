import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  html: string;
  text: string;
  parsed: ParsedMail;
}

/** A real SMTP server on loopback that keeps what it receives, for assertions. */
export async function startSmtpSink() {
  const received: ReceivedMail[] = [];
  /** Recipients the server answers with this SMTP code (e.g. 550 unknown mailbox, 451 try later). */
  const rejections = new Map<string, number>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onRcptTo(address, _session, callback) {
      const code = rejections.get(address.address);
      if (!code) return callback();
      const err = Object.assign(new Error(code >= 500 ? "Mailbox unavailable" : "Try again later"), { responseCode: code });
      callback(err);
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: parsed.subject ?? "",
            html: typeof parsed.html === "string" ? parsed.html : "",
            text: parsed.text ?? "",
            parsed,
          });
          callback();
        })
        .catch(callback);
    },
  });
  // A client that drops its connection mid-session (the crash test kills Keyward with SIGKILL while
  // its outbox may be sending) is an `error` event here: unheard, it would be an uncaught exception
  // in the test process. The sink is a peer: what it received is what the tests assert on.
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    received,
    reject: (address: string, code: number) => void rejections.set(address, code),
    accept: (address: string) => void rejections.delete(address),
    /** Messages to one address, oldest first. */
    to: (address: string) => received.filter((m) => m.to.includes(address)),
    last: (address: string) => received.filter((m) => m.to.includes(address)).at(-1),
    /** The newest message to `address` whose text contains `fragment`. */
    lastWith: (address: string, fragment: string) => received.filter((m) => m.to.includes(address) && m.text.includes(fragment)).at(-1),
    clear: () => void received.splice(0),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type SmtpSink = Awaited<ReturnType<typeof startSmtpSink>>;

/** The first link in a message's text part that contains `fragment`. */
export function linkIn(mail: ReceivedMail | undefined, fragment: string): string {
  const url = mail?.text.match(/https?:\/\/\S+/g)?.find((u) => u.includes(fragment));
  if (!url) throw new Error(`no link with "${fragment}" in ${mail ? `"${mail.subject}"` : "(no message)"}`);
  return url;
}

/** A query parameter of a link (the token, or another name such as "code"). */
export const tokenFrom = (url: string, name = "token"): string => new URL(url).searchParams.get(name) ?? "";

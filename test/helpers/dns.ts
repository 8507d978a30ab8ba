import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { sharedTool } from "./shared-tools.js";

/**
 * A REAL DNS server on loopback (dnsmasq, ../shared/tools/dns): it answers only the records it is
 * given, and `set` changes them while it runs. Needs dnsmasq (Debian's dnsmasq-base). DNS_TOOL
 * points at dns.mjs when the tool is not beside the repository (CI exports it as for ZEROTIER_TOOL).
 */
export const DNS_TOOL = sharedTool(process.env.DNS_TOOL, "dns/dns.mjs");

export interface RealDns {
  /** "127.0.0.1:port", as DNS_RESOLVER and node:dns take it. */
  server: string;
  /** Sets TXT records (a name set to null is removed) and resolves once they are served. */
  setTxt(records: Record<string, string[] | null>): Promise<void>;
  stop(): void;
}

export async function startDns(): Promise<RealDns> {
  if (!existsSync(DNS_TOOL)) throw new Error(`The DNS tool is missing at ${DNS_TOOL}: set DNS_TOOL to ../shared/tools/dns/dns.mjs (and install dnsmasq-base)`);
  const child: ChildProcess = spawn(process.execPath, [DNS_TOOL], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the DNS tool did not answer within 20 s")), 20_000).unref());
    const line = await Promise.race([lines.next(), timeout]);
    if (line.done) throw new Error("the DNS tool exited before it answered");
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  const info = await next();
  // One change at a time: each answer line belongs to the request before it.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    server: String(info.server),
    setTxt(records) {
      const run = queue.then(async () => {
        child.stdin!.write(`${JSON.stringify({ set: { txt: records } })}\n`);
        const answer = await next();
        if (answer.ok !== true) throw new Error(`the DNS tool refused the change: ${JSON.stringify(answer)}`);
      });
      queue = run.catch(() => {});
      return run;
    },
    stop: () => void child.kill("SIGTERM"),
  };
}

import { SshWriter } from "./wire.js";

export interface KrlCaSection {
  /** Plain public key blob of the CA whose certificates are revoked. */
  caKey: Buffer;
  serials: bigint[];
}

const MAGIC = Buffer.from("SSHKRL\n\0", "binary");

/**
 * An OpenSSH key revocation list (PROTOCOL.krl) revoking certificates by serial, one certificate
 * section per CA. Only the constructs OpenSSH 9.2 accepts: no extension sections, no serial 0,
 * serials sorted and unique.
 */
export function buildKrl(sections: KrlCaSection[], meta: { version: bigint; generatedAt: Date; comment?: string }): Buffer {
  const w = new SshWriter()
    .raw(MAGIC)
    .uint32(1)
    .uint64(meta.version)
    .uint64(BigInt(Math.floor(meta.generatedAt.getTime() / 1000)))
    .uint64(0n)
    .string(Buffer.alloc(0))
    .string(meta.comment ?? "");
  for (const section of sections) {
    const serials = [...new Set(section.serials.filter((s) => s > 0n))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (serials.length === 0) continue;
    const list = new SshWriter();
    for (const s of serials) list.uint64(s);
    const data = new SshWriter().string(section.caKey).string(Buffer.alloc(0)).byte(0x20).string(list.toBuffer()).toBuffer();
    w.byte(1).string(data);
  }
  return w.toBuffer();
}

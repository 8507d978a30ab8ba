/** RFC 4251 wire primitives: uint32/uint64 big-endian, length-prefixed strings, mpints. */
export class SshWriter {
  private readonly parts: Buffer[] = [];

  raw(bytes: Buffer | string): this {
    this.parts.push(typeof bytes === "string" ? Buffer.from(bytes) : bytes);
    return this;
  }
  byte(n: number): this {
    return this.raw(Buffer.from([n]));
  }
  uint32(n: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return this.raw(b);
  }
  uint64(n: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(n);
    return this.raw(b);
  }
  string(s: Buffer | string): this {
    const b = typeof s === "string" ? Buffer.from(s) : s;
    return this.uint32(b.length).raw(b);
  }
  /** Two's-complement minimal big-endian; a 0x00 in front when the top bit is set. */
  mpint(unsigned: Buffer): this {
    let i = 0;
    while (i < unsigned.length && unsigned[i] === 0) i++;
    let v = unsigned.subarray(i);
    if (v.length > 0 && (v[0]! & 0x80) !== 0) v = Buffer.concat([Buffer.from([0]), v]);
    return this.string(v);
  }
  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export class SshReader {
  private offset = 0;
  constructor(private readonly buf: Buffer) {}

  private take(n: number): Buffer {
    if (n < 0 || this.offset + n > this.buf.length) throw new Error("truncated SSH data");
    const out = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
  raw(n: number): Buffer {
    return this.take(n);
  }
  byte(): number {
    return this.take(1)[0]!;
  }
  uint32(): number {
    return this.take(4).readUInt32BE();
  }
  uint64(): bigint {
    return this.take(8).readBigUInt64BE();
  }
  string(): Buffer {
    return this.take(this.uint32());
  }
  text(): string {
    return this.string().toString("utf8");
  }
  /** An mpint as an unsigned big-endian buffer (negative values are refused). */
  mpint(): Buffer {
    const v = this.string();
    if (v.length > 0 && (v[0]! & 0x80) !== 0) throw new Error("negative mpint");
    let i = 0;
    while (i < v.length - 1 && v[i] === 0) i++;
    return v.subarray(i);
  }
  get position(): number {
    return this.offset;
  }
  get done(): boolean {
    return this.offset === this.buf.length;
  }
}

/** A packed list of strings (principals) or of (name, data) pairs (options, extensions). */
export const packStrings = (items: string[]): Buffer => {
  const w = new SshWriter();
  for (const s of items) w.string(s);
  return w.toBuffer();
};

import fc from "fast-check";

/**
 * Hostile leaf values for the fuzzers: the inputs a service must refuse (or store faithfully)
 * without a 500: boundary sizes, control and bidirectional characters, lone surrogates, numbers
 * past every column's range, and strings that look like numbers, ids or injections.
 */

/** Characters that break naive code: NUL, C0/C1 controls, RTL override, BOM, emoji, lone surrogates. */
const NASTY_CHARS = ["\u0000", "\u0001", "\u001b", "\u007f", "\u0085", "\u2028", "\u202e", "\u200f", "\ufeff", "\uffff", "\ud800", "\udfff", "😀", "👩‍👩‍👧", "ﷺ", "Ω", "\u0301", "%", "\\", '"', "'", "<", ">", "&", "/", "\n", "\t", " "];
const unit = fc.oneof({ arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }), weight: 3 }, fc.constantFrom(...NASTY_CHARS));

/** Short strings of any code point (including lone surrogates and controls). */
export const unicodeString = (maxLength = 24) => fc.string({ unit, maxLength });

const SPECIAL_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\u202egnp.exe",
  "\ud800",
  "NaN",
  "Infinity",
  "-Infinity",
  "undefined",
  "null",
  "true",
  "0",
  "-1",
  "1e309",
  "99999999999999999999",
  "-99999999999999999999",
  "0x7fffffff",
  "9223372036854775808",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "00000000-0000-4000-8000-00000000000g",
  "{{7*7}}",
  "${jndi:ldap://x}",
  "'; drop table users; --",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "javascript:alert(1)",
  "http://127.0.0.1:1/",
  "__proto__",
  "constructor",
  "a@b",
  "@",
  "x@example.com\r\nBcc: y@example.com",
];

/** Long runs: at and past the usual column and body limits. */
const longString = fc.oneof(
  fc.constantFrom(256, 1025, 4097, 70_000).map((n) => "x".repeat(n)),
  fc.tuple(fc.constantFrom("é", "😀", "\u0000", "\ud800"), fc.constantFrom(255, 256, 2001)).map(([c, n]) => c.repeat(n)),
);

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...SPECIAL_STRINGS), weight: 4 },
  { arbitrary: unicodeString(), weight: 4 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: longString, weight: 1 },
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, -1.5, 2 ** 31, 2 ** 31 - 1, -(2 ** 31), 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e30, -1e30, 1e308, Number.MIN_VALUE),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A JSON value of the wrong kind for whatever was expected. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  hostileNumber,
  hostileString,
  fc.constant([]),
  fc.constant({}),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom("a", "$gt", "__proto__", "constructor", "id"), hostileString, { maxKeys: 2 }),
  fc.jsonValue({ maxDepth: 3 }),
);

/**
 * A path or query-string segment, already %-encoded: ids of the wrong shape, escapes that do not
 * decode (a lone surrogate's UTF-8 bytes, a truncated sequence), NUL and huge numbers.
 */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: hostileString.filter((s) => s.length > 0 && s.length < 5000).map(encodeSegment), weight: 5 },
  { arbitrary: fc.constantFrom("%ED%A0%80", "%E0%A4%A", "%ZZ", "%", "%00", "%C0%AF", "%FF", "..", ".", "%2e%2e", "%2F", "x%00y", "a;b", "a,b"), weight: 3 },
  { arbitrary: fc.uuid().map((u) => u.toUpperCase()), weight: 1 },
  { arbitrary: fc.uuid().map((u) => u.slice(0, -1)), weight: 1 },
  { arbitrary: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String), weight: 1 },
);

/** encodeURIComponent, except that a lone surrogate becomes the (invalid) UTF-8 bytes of it, not a throw. */
export function encodeSegment(s: string): string {
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) out += `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** Malformed JSON texts and bodies of the wrong media type. */
export const brokenJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("{", "}", '{"a":}', '{"a":1,}', "{'a':1}", '{"a":1}x', "[1,2", "nul", "\u0000", "", " ", '{"a":"\ud800"}', '{"__proto__":{"admin":true}}', '{"a":1e99999}', '{"a":-}', "\ufeff{}"),
  fc.string({ unit, maxLength: 30 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v).slice(0, -1)),
);

export const WRONG_CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/json; charset=latin1",
  "application/json; charset=utf-16",
  "application/merge-patch+json",
  "application/octet-stream",
  "application/jsonx",
  "",
];

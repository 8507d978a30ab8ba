import { describe, expect, it } from "vitest";
import { checkClaimableDomain, emailDomain } from "../../src/lib/domain-names.js";

const problem = (input: string) => {
  const c = checkClaimableDomain(input);
  return c.ok ? `ok ${c.domain}` : c.problem;
};

describe("claimable domain names", () => {
  it("normalise case, spaces, a trailing dot and internationalised labels (IDNA A-labels)", () => {
    expect(problem(" Example.COM. ")).toBe("ok example.com");
    expect(problem("Bücher.example")).toBe("ok xn--bcher-kva.example");
    expect(problem("xn--bcher-kva.example")).toBe("ok xn--bcher-kva.example");
    expect(problem("eng.example.co.uk")).toBe("ok eng.example.co.uk");
    expect(problem("acme.test")).toBe("ok acme.test");
  });

  it("refuse public suffixes, single labels and address literals", () => {
    for (const d of ["com", "co.uk", "github.io", "s3.amazonaws.com", "localhost", "test"]) expect([d, problem(d)]).toEqual([d, "public_suffix"]);
    for (const d of ["127.0.0.1", "[::1]", "::1", "192.168.0.1"]) expect([d, problem(d)]).toEqual([d, "ip_address"]);
  });

  it("refuse consumer mail providers, their subdomains and their country domains", () => {
    for (const d of ["gmail.com", "googlemail.com", "mail.gmail.com", "outlook.com", "hotmail.com", "live.com", "yahoo.com", "yahoo.co.uk", "icloud.com", "me.com", "aol.com", "proton.me", "protonmail.com", "gmx.de", "gmx.at", "gmx.net", "yandex.ru", "yandex.com.tr", "mail.ru", "qq.com", "163.com"]) {
      expect([d, problem(d)]).toEqual([d, "consumer"]);
    }
    // A company whose name merely resembles a provider's is not one.
    expect(problem("outlook-partners.com")).toBe("ok outlook-partners.com");
  });

  it("refuse what is no host name at all, rather than mapping it to one", () => {
    for (const d of ["", "exa mple.com", "https://example.com", "example.com/x", "a@example.com", "-a.example", "a-.example", "a..example", "exa_mple.com", "💩.example", "exa\u200bmple.com", "ex\u202eample.com", `${"a".repeat(64)}.com`, "1.2.3.4.5"]) {
      expect([d, problem(d)]).toEqual([d, "invalid"]);
    }
    expect(problem(`${"abcdefghi.".repeat(26)}com`)).toBe("too_long");
  });

  it("read the claimable domain of an email address", () => {
    expect(emailDomain("Alice@Example.COM")).toBe("example.com");
    expect(emailDomain("a@b@bücher.example")).toBe("xn--bcher-kva.example");
    expect(emailDomain("alice@gmail.com")).toBeNull();
    expect(emailDomain("no-at-sign")).toBeNull();
    expect(emailDomain("@example.com")).toBeNull();
  });
});

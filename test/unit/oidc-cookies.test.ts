import { describe, expect, it } from "vitest";
import { providerCookies } from "../../src/oidc/cookies.js";

const names = { session: "s", interaction: "i", resume: "r" };

/** Where the provider's session cookie can be SameSite=None (and so the endpoints take POST): src/oidc/cookies.ts. */
describe("provider cookies and POST methods", () => {
  it.each(["https://id.example.com", "http://localhost:8080", "http://127.0.0.1:3000", "http://[::1]:8080"])("%s: SameSite=None session cookie, POST on", (url) => {
    const { cookies, postMethods } = providerCookies(url, ["k"], names);
    expect(postMethods).toBe(true);
    expect(cookies.long).toMatchObject({ sameSite: "none", httpOnly: true, signed: true });
    expect(cookies.short).toMatchObject({ sameSite: "lax" });
  });

  it("keeps Lax and GET only on plain http to a name browsers do not treat as secure", () => {
    const { cookies, postMethods } = providerCookies("http://keyward.lan:8080", ["k"], names);
    expect(postMethods).toBe(false);
    expect(cookies.long).toMatchObject({ sameSite: "lax" });
  });
});

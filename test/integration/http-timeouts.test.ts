import { request } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetricsServer } from "../../src/http/metrics.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { registerClient } from "../factories/oidc.js";
import { newOrg } from "../factories/orgs.js";
import { newUser } from "../factories/users.js";

// Read timeouts short enough for a test (production: 20 s, 60 s, 5 s); BODY_LIMIT at its default (100kb).
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ HTTP_HEADERS_TIMEOUT: "1", HTTP_REQUEST_TIMEOUT: "2", HTTP_KEEP_ALIVE_TIMEOUT: "1", METRICS_TOKEN: "m".repeat(40) });
});
afterAll(() => app?.close());

const REST = "/api/v1/auth/login";
const GRAPHQL = "/graphql";
const TOKEN = "/api/v1/oidc/token";
const DEVICE_FORM = "/api/v1/oidc/device";
const JSON_TYPE = "application/json";
const FORM_TYPE = "application/x-www-form-urlencoded";

interface RawAnswer {
  /** Everything the server sent before closing. */
  text: string;
  /** From the first byte sent to the socket's close. */
  ms: number;
}

/**
 * A client on a bare socket: sends `head` at once, then `trickle` one character every `everyMs`
 * until the server closes the connection (or the trickle runs out, then waits). Resolves when the
 * socket closes; a server that never closes fails the test by its timeout.
 */
function rawClient(head: string, trickle = "", everyMs = 250, port = Number(new URL(app.url).port)): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const started = Date.now();
    let text = "";
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on("connect", () => {
      if (head) socket.write(head);
      timer = setInterval(() => {
        if (sent < trickle.length && socket.writable) socket.write(trickle[sent++]!);
      }, everyMs);
    });
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ text, ms: Date.now() - started });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open; it sent ${JSON.stringify(text)}`));
    }, 8000).unref();
  });
}

const statusLine = (text: string) => text.split("\r\n")[0];
/** Every answer's status line, in order (a body may end right before the next one). */
const statusLines = (text: string) => text.match(/HTTP\/1\.1 \d{3} [A-Za-z ]+(?=\r\n)/g);
const requestHead = (path: string, type: string, length: number) => `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;

describe("a client too slow with its request gets 408 and the connection closes", () => {
  it("a body trickled a byte at a time, on REST, GraphQL and the token endpoint", async () => {
    const body = { [REST]: JSON.stringify({ email: "slow@example.com", password: "a password that comes slowly" }), [GRAPHQL]: JSON.stringify({ query: "{ __typename }" }), [TOKEN]: "grant_type=client_credentials&client_id=nobody" };
    const answers = await Promise.all(
      ([[REST, JSON_TYPE], [GRAPHQL, JSON_TYPE], [TOKEN, FORM_TYPE]] as const).map(([path, type]) =>
        // Two bytes at once, then one every 250 ms: the whole body would take many seconds.
        rawClient(requestHead(path, type, body[path].length) + body[path].slice(0, 2), body[path].slice(2)),
      ),
    );
    for (const answer of answers) {
      expect(statusLine(answer.text)).toBe("HTTP/1.1 408 Request Timeout");
      expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
      // HTTP_REQUEST_TIMEOUT (2 s) bounds it, counted from the request's first byte.
      expect(answer.ms).toBeGreaterThanOrEqual(1900);
      expect(answer.ms).toBeLessThan(4000);
    }
    // Nothing else of the server was held up.
    expect((await app.http.get("/api/health")).status).toBe(200);
  });

  it("headers trickled a line at a time, and a connection that sends nothing", async () => {
    const [slowHeaders, silent] = await Promise.all([
      rawClient(`POST ${REST} HTTP/1.1\r\nHost: localhost\r\n`, "X-Slow: 1\r\nX-Slower: 2\r\nX-Slowest: 3\r\n".repeat(4), 50),
      rawClient(""),
    ]);
    for (const answer of [slowHeaders, silent]) {
      expect(statusLine(answer.text)).toBe("HTTP/1.1 408 Request Timeout");
      // HTTP_HEADERS_TIMEOUT (1 s).
      expect(answer.ms).toBeGreaterThanOrEqual(900);
      expect(answer.ms).toBeLessThan(3000);
    }
  });

  it("the separate metrics port has the same bounds", async () => {
    const server = createMetricsServer(app.container.metrics!, { timeouts: app.container.config.http.timeouts });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const silent = await rawClient("GET /metrics HTTP/1.1\r\n", "", 250, (server.address() as AddressInfo).port);
      expect(statusLine(silent.text)).toBe("HTTP/1.1 408 Request Timeout");
      expect(silent.ms).toBeLessThan(3000);
    } finally {
      server.close();
    }
  });

  it("a keep-alive connection: closed when idle, and 408 when its next request stalls", async () => {
    const health = "GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n";
    const idle = await rawClient(health);
    expect(statusLine(idle.text)).toBe("HTTP/1.1 200 OK");
    expect(idle.text).toMatch(/\r\nkeep-alive: timeout=1\r\n/i);
    // HTTP_KEEP_ALIVE_TIMEOUT (1 s), plus the second Node grants the client to see it first.
    expect(idle.ms).toBeLessThan(4000);
    expect(statusLines(idle.text)).toEqual(["HTTP/1.1 200 OK"]);

    // Slowloris on a kept-alive connection: the second request's headers never end.
    const stalled = await rawClient(health + `GET /api/health HTTP/1.1\r\nHost: localhost\r\n`, "X-Slow: 1\r\n".repeat(40), 50);
    expect(statusLines(stalled.text)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 408 Request Timeout"]);
    expect(stalled.ms).toBeLessThan(3000);
  });

  it("a slow but steady body within the bound is answered", async () => {
    const body = JSON.stringify({ email: "steady@example.com", password: "wrong" });
    // All of it in about 1.2 s, under the 2 s bound: read, then refused for the credentials.
    const answer = await rawClient(requestHead(REST, JSON_TYPE, body.length).replace("Host: localhost", "Host: localhost\r\nConnection: close") + body.slice(0, -6), body.slice(-6), 200);
    expect(statusLine(answer.text)).toBe("HTTP/1.1 401 Unauthorized");
  });
});

interface Answer {
  status: number;
  header(name: string): string | null;
  json(): any;
}

/** Sent with Transfer-Encoding: chunked (a stream of unknown length), 8 kB at a time. */
function postChunked(path: string, headers: Record<string, string>, text: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, header: (name) => (res.headers[name] as string | undefined) ?? null, json: () => JSON.parse(body) }));
    });
    // The server may answer and close before the whole body is out: only the answer counts.
    req.on("error", reject);
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += 8192) req.write(bytes.subarray(i, i + 8192));
    req.end();
  });
}

type Sent = "with Content-Length" | "chunked";
async function post(path: string, type: string, text: string, sent: Sent, headers: Record<string, string> = {}): Promise<Answer> {
  if (sent === "chunked") return postChunked(path, { "content-type": type, ...headers }, text);
  const res = await fetch(`${app.url}${path}`, { method: "POST", headers: { "content-type": type, ...headers }, body: text, redirect: "manual" });
  const body = await res.text();
  return { status: res.status, header: (name) => res.headers.get(name), json: () => JSON.parse(body) };
}

const REST_LIMIT = 100 * 1024;
const OIDC_LIMIT = 56 * 1024;
const login = (size: number) => {
  const base = JSON.stringify({ email: "big@example.com", password: "not the password", padding: "" });
  return base.replace('"padding":""', `"padding":"${"x".repeat(size - base.length)}"`);
};
const graphql = (size: number) => {
  const base = JSON.stringify({ query: "{ __typename }" });
  // Whitespace inside the document: still the same query.
  return base.replace("{ __typename }", `{ __typename ${" ".repeat(size - base.length)}}`);
};
const form = (size: number, fields: Record<string, string> = { grant_type: "client_credentials" }) => {
  const base = `${new URLSearchParams(fields).toString()}&padding=`;
  return base + "x".repeat(size - base.length);
};

describe("an oversized body gets 413 on every door, with a length or chunked", () => {
  for (const sent of ["with Content-Length", "chunked"] as const) {
    it(`REST and GraphQL, ${sent}`, async () => {
      const rest = await post(REST, JSON_TYPE, login(REST_LIMIT + 1), sent);
      expect(rest.status).toBe(413);
      expect(rest.json().error.type).toBe("PAYLOAD_TOO_LARGE");
      const gql = await post(GRAPHQL, JSON_TYPE, graphql(REST_LIMIT + 1), sent);
      expect(gql.status).toBe(413);
      expect(gql.json().errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
    });

    it(`the token endpoint and the provider's other form endpoints, ${sent}, with an OAuth error`, async () => {
      for (const path of [TOKEN, "/api/v1/oidc/revoke", "/api/v1/oidc/introspect", "/api/v1/oidc/device/auth", "/api/v1/oidc/par", "/api/v1/oidc/logout/confirm"]) {
        const res = await post(path, FORM_TYPE, form(OIDC_LIMIT + 1), sent);
        expect([path, res.status]).toEqual([path, 413]);
        expect(res.header("content-type")).toMatch(/^application\/json/);
        expect(res.json()).toEqual({ error: "invalid_request", error_description: `The request body is larger than ${OIDC_LIMIT} bytes` });
      }
    });

    it(`a hosted form (the device code page), ${sent}`, async () => {
      // The page's form, with its session cookie and the xsrf secret it sets (renewed after a refusal).
      const devicePage = async () => {
        const page = await fetch(`${app.url}${DEVICE_FORM}`);
        const xsrf = /name="xsrf" value="([^"]+)"/.exec(await page.text())?.[1];
        expect(xsrf).toBeDefined();
        return { cookie: page.headers.getSetCookie().map((c) => c.split(";")[0]).join("; "), fields: { xsrf: xsrf!, user_code: "ABCD-EFGH" } };
      };
      const tooLarge = await devicePage();
      const res = await post(DEVICE_FORM, FORM_TYPE, form(OIDC_LIMIT + 1, tooLarge.fields), sent, { cookie: tooLarge.cookie });
      expect(res.status).toBe(413);
      expect(res.json().error).toBe("invalid_request");
      // Just under the limit the form is read: the page answers about the code.
      const fits = await devicePage();
      const read = await post(DEVICE_FORM, FORM_TYPE, form(OIDC_LIMIT, fits.fields), sent, { cookie: fits.cookie });
      expect(read.status).toBe(200);
      expect(read.header("content-type")).toMatch(/^text\/html/);
    });
  }

  it("a 10 MB form to the token endpoint (found by the outside pass: it answered 400)", async () => {
    const res = await post(TOKEN, FORM_TYPE, form(10 * 1024 * 1024), "with Content-Length");
    expect(res.status).toBe(413);
    expect(res.json().error).toBe("invalid_request");
    expect(res.header("connection")).toBe("close");
  });
});

describe("a body just under the limit is read as before", () => {
  for (const sent of ["with Content-Length", "chunked"] as const) {
    it(`REST, GraphQL and a client-credentials grant, ${sent}`, async () => {
      // Read and parsed: refused for the credentials, not the size.
      const rest = await post(REST, JSON_TYPE, login(REST_LIMIT), sent);
      expect(rest.status).toBe(401);
      const gql = await post(GRAPHQL, JSON_TYPE, graphql(REST_LIMIT), sent);
      expect(gql.status).toBe(200);
      expect(gql.json().data).toEqual({ __typename: "Query" });

      const admin = await newUser(app);
      const org = await newOrg(app, admin);
      const client = await registerClient(app, org.id, admin, { grant_types: ["client_credentials"], redirect_uris: [] });
      const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}`;
      const token = await post(TOKEN, FORM_TYPE, form(OIDC_LIMIT), sent, { authorization: basic });
      expect(token.status).toBe(200);
      expect(token.json().access_token).toEqual(expect.any(String));
    });
  }
});

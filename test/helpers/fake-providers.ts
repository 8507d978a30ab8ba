import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * Local stand-ins for hosted email APIs, following their documented request and response shapes
 * (shared/reference/external-apis.md §3 Resend, §4 SendGrid). They record what they accept, and
 * can be switched into an outage.
 */
interface Recorded {
  headers: IncomingMessage["headers"];
  body: any;
  id: string;
}

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString() || "{}");
  } catch {
    return undefined;
  }
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server: Server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};

export async function startFakeResend(apiKey: string) {
  const accepted: Recorded[] = [];
  const attempts: Recorded[] = [];
  const idempotency = new Map<string, { hash: string; id: string }>();
  const state = { outage: false };
  const rl = { "ratelimit-limit": "5", "ratelimit-remaining": "4", "ratelimit-reset": "1" };
  const server = await listen(async (req, res) => {
    if (req.method !== "POST" || req.url !== "/emails") return json(res, 404, { statusCode: 404, message: "Not found", name: "not_found" }, rl);
    const auth = req.headers.authorization;
    if (!auth) return json(res, 401, { statusCode: 401, message: "Missing API key in the authorization header.", name: "missing_api_key" }, rl);
    if (auth !== `Bearer ${apiKey}`) return json(res, 403, { statusCode: 403, message: "API key is invalid", name: "invalid_api_key" }, rl);
    const body = await readJson(req);
    attempts.push({ headers: req.headers, body, id: "" });
    if (state.outage) return json(res, 500, { statusCode: 500, message: "Internal server error", name: "internal_server_error" }, rl);
    const missing = ["from", "to", "subject"].find((f) => !body?.[f]);
    if (missing || !(body.html || body.text)) return json(res, 422, { statusCode: 422, message: `Missing \`${missing ?? "html"}\` field.`, name: "missing_required_field" }, rl);
    if (!/^([^<>]*<)?[^@\s<>]+@[^@\s<>]+>?$/.test(String(body.from))) return json(res, 422, { statusCode: 422, message: "Invalid `from` field.", name: "invalid_from_address" }, rl);
    const key = req.headers["idempotency-key"] as string | undefined;
    const hash = createHash("sha256").update(JSON.stringify(body)).digest("hex");
    if (key !== undefined) {
      if (key.length < 1 || key.length > 256) return json(res, 400, { statusCode: 400, message: "Invalid idempotency key", name: "invalid_idempotency_key" }, rl);
      const seen = idempotency.get(key);
      if (seen && seen.hash !== hash) return json(res, 409, { statusCode: 409, message: "Same idempotency key used with a different payload", name: "invalid_idempotent_request" }, rl);
      if (seen) return json(res, 200, { id: seen.id }, rl);
    }
    const id = randomUUID();
    if (key !== undefined) idempotency.set(key, { hash, id });
    accepted.push({ headers: req.headers, body, id });
    json(res, 200, { id }, rl);
  });
  return { ...server, accepted, attempts, state };
}

export async function startFakeSendgrid(apiKey: string) {
  const accepted: Recorded[] = [];
  const attempts: Recorded[] = [];
  const state = { outage: false };
  const rl = { "x-ratelimit-limit": "600", "x-ratelimit-remaining": "599", "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 60) };
  const server = await listen(async (req, res) => {
    if (req.method !== "POST" || req.url !== "/v3/mail/send") return json(res, 404, { errors: [{ message: "not found", field: null, help: null }] });
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return json(res, 401, { errors: [{ message: "The provided authorization grant is invalid, expired, or revoked", field: null, help: null }] });
    }
    const body = await readJson(req);
    attempts.push({ headers: req.headers, body, id: "" });
    if (state.outage) return json(res, 503, { errors: [{ message: "Service unavailable", field: null, help: null }] }, rl);
    const errors: Array<{ message: string; field: string }> = [];
    if (!Array.isArray(body?.personalizations) || body.personalizations.length === 0 || !body.personalizations.every((p: any) => Array.isArray(p.to) && p.to.length > 0)) {
      errors.push({ message: "The personalizations field is required and must have at least one personalization.", field: "personalizations" });
    }
    if (!body?.from?.email) errors.push({ message: "The from object must be provided for every email send.", field: "from" });
    if (!body?.subject && !body?.personalizations?.every((p: any) => p.subject)) errors.push({ message: "The subject is required.", field: "subject" });
    if (!Array.isArray(body?.content) || body.content.length === 0 || body.content[0].type !== "text/plain") {
      errors.push({ message: "The content value must be a string at least one character in length; text/plain first.", field: "content" });
    }
    if (errors.length) return json(res, 400, { errors: errors.map((e) => ({ ...e, help: null })) }, rl);
    const id = randomUUID().replace(/-/g, "").slice(0, 22);
    accepted.push({ headers: req.headers, body, id });
    res.writeHead(202, { "x-message-id": id, ...rl });
    res.end();
  });
  return { ...server, accepted, attempts, state };
}

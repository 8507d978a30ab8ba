import express from "express";
import { Redis } from "ioredis";
import { createSessionStores } from "../src/infra/session-store.js";
import { sha256Hex } from "../src/lib/crypto/index.js";

/**
 * The baseline for the authenticated-query scenario: a bare Express handler that reads the same
 * session record from the same store Keyward uses, and does nothing else; and `/health`, the
 * baseline of the liveness probe.
 */
const redis = new Redis(process.env.REDIS_URL!);
const { records } = createSessionStores(redis, process.env.REDIS_KEY_PREFIX ?? "keyward:");
const app = express();
app.get("/me", async (req, res) => {
  const token = req.get("authorization")?.slice(7) ?? "";
  const session = await records.get(sha256Hex(token));
  if (!session?.auth) return void res.status(401).json({ error: "no session" });
  res.json({ userId: session.auth.userId });
});
// The baseline for /api/health: a bare handler answering the same JSON.
app.get("/health", (_req, res) => void res.json({ success: true, message: "Service is healthy", data: { status: "healthy", service: "keyward", version: "0.1.0" } }));
app.listen(Number(process.env.PORT), "127.0.0.1");

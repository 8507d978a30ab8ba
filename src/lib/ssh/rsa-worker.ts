import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { Worker } from "node:worker_threads";

/**
 * RSA key generation on a dedicated thread. `crypto.generateKeyPair` runs on libuv's pool, the
 * same four threads argon2 hashes on: a burst of RSA-4096 CA keys (seconds each) stalled every
 * sign-in. One worker, one job at a time, so key generation never takes more than that thread.
 * The worker is plain JavaScript (no loader needed) and is unreferenced while idle.
 */
const SOURCE = `
const { parentPort } = require("node:worker_threads");
const { generateKeyPairSync } = require("node:crypto");
parentPort.on("message", ({ id, bits }) => {
  try {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: bits, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
    parentPort.postMessage({ id, pem: privateKey });
  } catch (e) {
    parentPort.postMessage({ id, error: String(e && e.message || e) });
  }
});
`;

interface Job {
  resolve: (pair: { privateKey: KeyObject; publicKey: KeyObject }) => void;
  reject: (e: Error) => void;
}

let worker: Worker | null = null;
let nextId = 0;
const jobs = new Map<number, Job>();

function start(): Worker {
  const w = new Worker(SOURCE, { eval: true });
  w.on("message", (m: { id: number; pem?: string; error?: string }) => {
    const job = jobs.get(m.id);
    jobs.delete(m.id);
    if (jobs.size === 0) w.unref();
    if (!job) return;
    if (m.error || !m.pem) return job.reject(new Error(`RSA key generation failed: ${m.error}`));
    const privateKey = createPrivateKey(m.pem);
    job.resolve({ privateKey, publicKey: createPublicKey(privateKey) });
  });
  w.on("error", (e) => fail(w, e));
  w.on("exit", (code) => fail(w, new Error(`RSA key worker exited (${code})`)));
  return w;
}

function fail(w: Worker, e: Error): void {
  if (worker === w) worker = null;
  for (const job of jobs.values()) job.reject(e);
  jobs.clear();
}

export function generateRsaKeyPair(bits: number): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  worker ??= start();
  const w = worker;
  const id = nextId++;
  return new Promise((resolve, reject) => {
    jobs.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, bits });
  });
}

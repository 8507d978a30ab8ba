import { spawn, type ChildProcess } from "node:child_process";

/**
 * `npm run dev`: Keyward on port 3000 restarting on every change of the server (tsx watch), and the
 * web app's Vite dev server on port 5173 with hot reload, which passes everything that is not the
 * app through to Keyward (web/vite.config.ts): open http://localhost:5173. Ctrl-C stops both.
 */
const children: ChildProcess[] = [];
const run = (name: string, args: string[], env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, args, { stdio: "inherit", env: { ...process.env, ...env } });
  child.on("exit", (code, signal) => {
    console.error(`keyward dev: ${name} ended (${signal ?? `exit ${code}`}); stopping.`);
    stop(code ?? 1);
  });
  children.push(child);
};
const stop = (code: number) => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
  process.exit(code);
};

const port = process.env.PORT ?? "3000";
run("the server", ["node_modules/tsx/dist/cli.mjs", "watch", "src/main.ts"], { NODE_ENV: process.env.NODE_ENV ?? "development", PORT: port, APP_URL: process.env.APP_URL ?? "http://localhost:5173" });
run("the web app's dev server", ["node_modules/vite/bin/vite.js", "web"], { KEYWARD_DEV_SERVER: `http://localhost:${port}` });
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

import { spawn, type ChildProcess } from "node:child_process";
import { developmentEnv } from "../config/development.js";
import { ConfigError, loadConfig, loadDotEnvFile } from "../config/index.js";

/**
 * `npm run dev`: Keyward on port 3000 restarting on every change of the server (tsx watch), and the
 * web app's Vite dev server on port 5173 with hot reload, which passes everything that is not the
 * app through to Keyward (web/vite.config.ts): open http://localhost:5173. Ctrl-C stops both.
 */
const children: ChildProcess[] = [];
const run = (name: string, args: string[], env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, args, { stdio: "inherit", env: developmentEnv(env) });
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

// The server parses its configuration itself; it is parsed here too (rule 5), with the two values
// development sets, so a bad variable is named once, before either process starts, and the web
// app's dev server proxies to the port the server really listens on.
loadDotEnvFile();
const devEnv = developmentEnv();
let port: number;
try {
  port = loadConfig(devEnv).http.port;
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  console.error(`keyward dev: ${e.message}`);
  process.exit(1);
}
run("the server", ["node_modules/tsx/dist/cli.mjs", "watch", "src/main.ts"]);
run("the web app's dev server", ["node_modules/vite/bin/vite.js", "web"], { KEYWARD_DEV_SERVER: `http://localhost:${port}` });
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

import { Api } from "./api.js";
import { configDir, CredentialStore } from "./credentials.js";
import type { Io } from "./output.js";
import { insecureWarning, resolveServer } from "./server.js";
import { Session } from "./session.js";

/** What every command runs with: where to write, which server, and the signed-in session there. */
export interface Ctx {
  io: Io;
  env: NodeJS.ProcessEnv;
  store: CredentialStore;
  server: string;
  session: Session;
  api: Api;
}

export function createCtx(io: Io, opts: { server?: string }, env: NodeJS.ProcessEnv = process.env): Ctx {
  const store = new CredentialStore(configDir(env));
  const server = resolveServer(opts.server, env, store.current());
  const warning = insecureWarning(server);
  if (warning) io.stderr(io.err.yellow(warning));
  const session = new Session(server, store);
  return { io, env, store, server, session, api: new Api(session) };
}

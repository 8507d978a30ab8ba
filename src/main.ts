// First: sizes libuv's thread pool before anything can start it.
import "./config/thread-pool.js";
import { createRequire } from "node:module";

/**
 * The process's entry point: what must happen before the service's modules are even linked, then
 * the service (src/serve.ts).
 *
 * Node's `http` module offers `WebSocket`, `CloseEvent` and `MessageEvent` as lazy getters over
 * its bundled undici (the code behind `fetch`). An ESM import of `node:http` reads every export of
 * the module when it is linked, before any code runs, so importing it (Keyward does, and so does
 * oidc-provider) loaded all of undici at start, used or not: about 2 MB of V8 heap and 13 MB
 * resident in a bare process, 1.5–2.5 MB resident in Keyward's (issue 38). Nothing reads them from
 * `http`; the globals of the same names stay, and undici loads with the first `fetch`. So they are
 * removed from the module before the service's static imports are linked, which is why the
 * service is imported here, dynamically, and not beside this.
 */
const http = createRequire(import.meta.url)("node:http") as object;
for (const name of ["WebSocket", "CloseEvent", "MessageEvent"]) Reflect.deleteProperty(http, name);

await import("./serve.js");

import { applyPostgresPatch } from "../infra/postgres-patch.js";

/**
 * Applies Keyward's fix of postgres-js's close-under-load crash to the installed driver (see
 * src/infra/postgres-patch.ts). `npm install` runs it (prepare), and so does `npm run build`
 * (the image installs with --ignore-scripts). Usage: `npm run patch:driver`.
 */
const { applied, already } = applyPostgresPatch();
console.log(applied ? `patched postgres (${applied} files)` : `postgres already patched (${already} files)`);

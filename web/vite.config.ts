import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The web app (web/): built into dist/web, which Keyward's Express serves from the same origin as
 * /graphql (src/pages/web-app.ts); its files go under /_app/ (Keyward's hosted pages own /assets/).
 * `npm run dev` runs this dev server with hot reload in front of Keyward on port 3000: everything
 * that is not the app goes through to it, so the session cookie and /graphql are same-origin.
 */
const root = fileURLToPath(new URL(".", import.meta.url));
const server = process.env.KEYWARD_DEV_SERVER ?? "http://localhost:3000";
const passThrough = ["/graphql", "/api", "/assets", "/login", "/logout", "/register", "/verify-email", "/forgot-password", "/reset-password", "/activate", "/invite", "/cli", "/.well-known", "/network-access"];

export default defineConfig({
  root,
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "_app",
    // The first load's size is checked by a test (test/unit/web-bundle.test.ts); Vite's own warning is louder than useful.
    chunkSizeWarningLimit: 1024,
    reportCompressedSize: true,
  },
  server: {
    port: 5173,
    // The app imports the hosted pages' design tokens (src/pages/assets/tokens.css).
    fs: { allow: [fileURLToPath(new URL("..", import.meta.url))] },
    proxy: Object.fromEntries(passThrough.map((p) => [p, { target: server, changeOrigin: false }])),
  },
});

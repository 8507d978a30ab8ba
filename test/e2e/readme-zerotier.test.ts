import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { startZeroTierController, type RealController } from "../helpers/zerotier.js";
import { newOrg } from "../factories/orgs.js";
import { newUser, type TestUser } from "../factories/users.js";

/**
 * docs/networks.md's "Try it on a laptop" (network access) as written: its ```sh blocks that run here
 * (connect the organization, create a network at the controller and add it) in one
 * `bash -euo pipefail`, against a real ZeroTier One controller (../shared/tools/zerotier, the
 * same program the official package and image run) and a Keyward allowed to call it. The only
 * change is the controller's address, http://127.0.0.1:9993 in the README. The blocks that start
 * the controller and Keyward (first line a comment in parentheses) happen elsewhere: they are
 * checked against compose.yaml and each other instead.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const README_CONTROLLER = "http://127.0.0.1:9993";

/** The ```sh blocks of the subsection, list indentation removed, split into run and skipped. */
function laptopBlocks(readme: string): { run: string[]; skipped: string[] } {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => l.trimEnd() === "### Try it on a laptop");
  if (start < 0) throw new Error('docs/networks.md has no "### Try it on a laptop" section');
  const next = lines.findIndex((l, i) => i > start && /^##+ /.test(l));
  const blocks = { run: [] as string[], skipped: [] as string[] };
  let fence: { indent: number; lang: string; body: string[] } | null = null;
  for (const line of lines.slice(start + 1, next < 0 ? undefined : next)) {
    if (!fence) {
      const open = /^(\s*)```(\S*)\s*$/.exec(line);
      if (open) fence = { indent: open[1]!.length, lang: open[2]!, body: [] };
    } else if (/^\s*```\s*$/.test(line)) {
      if (fence.lang === "sh") {
        const first = fence.body.find((l) => l.trim() !== "") ?? "";
        (/^#\s*\(/.test(first.trim()) ? blocks.skipped : blocks.run).push(fence.body.join("\n"));
      }
      fence = null;
    } else fence.body.push(line.slice(Math.min(fence.indent, /^\s*/.exec(line)![0].length)));
  }
  return blocks;
}

function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "kw-readme-zt-"));
  const file = join(dir, "laptop.sh");
  writeFileSync(file, script + "\n");
  return new Promise((done) => {
    const child = spawn("bash", ["-x", "-euo", "pipefail", file], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.once("exit", (code) => done({ code, output }));
  });
}

let zt: RealController;
let app: TestApp;
let owner: TestUser;
let org: { id: string };
let walk: { code: number | null; output: string };
const readme = () => readFileSync(join(ROOT, "docs/networks.md"), "utf8");

beforeAll(async () => {
  zt = await startZeroTierController();
  app = await startTestApp({ RATE_LIMIT_ENABLED: "false", ZEROTIER_CONTROLLER_URLS: zt.url });
  owner = await newUser(app, { fullName: "Laptop Owner" });
  org = await newOrg(app, owner);
  const { run } = laptopBlocks(readme());
  walk = await runBash(run.join("\n\n").replaceAll(README_CONTROLLER, zt.url), { URL: app.url, T: owner.token, ORG: org.id, ZT_TOKEN: zt.token });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await zt?.stop();
});

describe("docs/networks.md: Try it on a laptop", () => {
  it("connects the organization and adds a network at the controller, as written", async () => {
    expect(walk.code, walk.output).toBe(0);
    expect(walk.output).toContain("Controller connected");
    const config = await app.http.get(`/api/v1/organizations/${org.id}/zerotier-config`, { token: owner.token });
    expect(config.body.data.config).toMatchObject({ zt_api_mode: "controller", zt_api_url: zt.url });
    expect(JSON.stringify(config.body)).not.toContain(zt.token);

    const networks = (await app.http.get(`/api/v1/organizations/${org.id}/networks`, { token: owner.token })).body.data.networks as Array<{ name: string; zerotier_network_id: string }>;
    expect(networks).toHaveLength(1);
    expect(networks[0]!.name).toBe("lab");
    // The network is the controller's own, under its address.
    expect(networks[0]!.zerotier_network_id.startsWith(zt.address)).toBe(true);
    expect(await zt.client.getNetwork(networks[0]!.zerotier_network_id)).toMatchObject({ id: networks[0]!.zerotier_network_id, name: "lab" });
  });

  it("starts the controller and Keyward in the blocks it skips here, on the address the others use and compose publishes", () => {
    const { run, skipped } = laptopBlocks(readme());
    expect(run.length).toBeGreaterThanOrEqual(2);
    for (const b of skipped) expect(b.trimStart()).toMatch(/^#\s*\(/);
    const compose = skipped.find((b) => b.includes("docker compose"))!;
    expect(compose).toContain("docker compose --profile zerotier up -d zerotier");
    expect(skipped.some((b) => b.includes("curl -s https://install.zerotier.com | sudo bash"))).toBe(true);
    // Every way of starting it leaves the token in ZT_TOKEN, which the blocks that run read.
    for (const b of skipped.filter((x) => x.includes("zerotier") && !x.includes("npm start"))) expect(b).toMatch(/^ZT_TOKEN=\$\(/m);
    expect(skipped.find((b) => b.includes("npm start"))).toContain(`ZEROTIER_CONTROLLER_URLS=${README_CONTROLLER} npm start`);
    expect(run.join("\n")).toContain(README_CONTROLLER);

    const service = (parse(readFileSync(join(ROOT, "compose.yaml"), "utf8")) as { services: Record<string, { profiles?: string[]; ports?: string[] }> }).services.zerotier!;
    expect(service.profiles).toEqual(["zerotier"]);
    expect(service.ports).toEqual([`127.0.0.1:\${ZEROTIER_PORT:-${new URL(README_CONTROLLER).port}}:9993`]);
  });
});

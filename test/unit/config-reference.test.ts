import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENV_SECTIONS, envSchema, varDoc } from "../../src/config/env.js";
import { renderConfigReference, renderEnvExample } from "../../src/config/reference.js";

describe("the configuration reference", () => {
  it("documents every variable the schema reads, once, with a meaning", () => {
    const documented = ENV_SECTIONS.flatMap((s) => Object.keys(s.vars));
    expect(new Set(documented).size).toBe(documented.length);
    expect(documented.sort()).toEqual(Object.keys(envSchema.shape).sort());
    for (const s of ENV_SECTIONS) for (const schema of Object.values(s.vars)) expect(varDoc(schema).description.length).toBeGreaterThan(5);
  });

  it("states each default the schema really applies", () => {
    const parsed = envSchema.parse({}) as Record<string, unknown>;
    for (const s of ENV_SECTIONS) {
      for (const [name, schema] of Object.entries(s.vars)) {
        const { fallback } = varDoc(schema);
        const fromDoc = fallback === "" ? undefined : (envSchema.shape as Record<string, typeof schema>)[name]!.parse(fallback);
        expect({ name, value: parsed[name] }).toEqual({ name, value: fromDoc ?? (Array.isArray(parsed[name]) ? [] : undefined) });
      }
    }
  });

  it("is checked in as generated: .env.example and docs/configuration.md (npm run config:docs)", () => {
    expect(readFileSync(".env.example", "utf8")).toBe(renderEnvExample());
    expect(readFileSync("docs/configuration.md", "utf8")).toBe(renderConfigReference());
  });
});

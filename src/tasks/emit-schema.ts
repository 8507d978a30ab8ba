import "reflect-metadata";
import { writeFileSync } from "node:fs";
import { loadConfig } from "../config/index.js";
import type { Services } from "../container.js";
import { buildGraphqlSchema, printSdl } from "../graphql/schema.js";
import { projectPath } from "../infra/paths.js";
import { openApiDocument } from "../../rest-shim/index.js";

/**
 * Writes the committed contracts: schema.graphql (GraphQL SDL) and openapi.json (REST). Neither
 * needs live services: schemas are built from metadata, no resolver or handler runs.
 */
export async function renderContracts(): Promise<{ sdl: string; openapi: string }> {
  const services = {} as Services;
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent" });
  const version = (await import("../../package.json", { with: { type: "json" } })).default.version;
  return {
    sdl: printSdl(await buildGraphqlSchema(services)),
    openapi: JSON.stringify(openApiDocument(services, config, version), null, 2) + "\n",
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { sdl, openapi } = await renderContracts();
  writeFileSync(projectPath("schema.graphql"), sdl);
  writeFileSync(projectPath("openapi.json"), openapi);
  console.log("wrote schema.graphql and openapi.json");
}

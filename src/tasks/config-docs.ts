import { writeFileSync } from "node:fs";
import { renderConfigReference, renderEnvExample } from "../config/reference.js";
import { projectPath } from "../infra/paths.js";

/** Rewrites .env.example and docs/configuration.md from the configuration schema. */
writeFileSync(projectPath(".env.example"), renderEnvExample());
writeFileSync(projectPath("docs/configuration.md"), renderConfigReference());
console.log("wrote .env.example and docs/configuration.md");

import { readFileSync } from "node:fs";

/** One instruction of a Dockerfile, continuation lines joined. */
export interface Instruction {
  op: string;
  args: string;
}

export interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

/** A small Dockerfile reader for tests: stages and their instructions (no container engine here). */
export function readDockerfile(path = "Dockerfile"): Stage[] {
  const lines = readFileSync(path, "utf8")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!op || args === undefined) throw new Error(`unreadable Dockerfile line: ${line}`);
    if (op.toUpperCase() === "FROM") {
      const [, from, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      stages.push({ name: name ?? String(stages.length), from: from!, instructions: [] });
    } else {
      stages.at(-1)!.instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

/** The exec-form array of a CMD or HEALTHCHECK (after its options). */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf("["));
  return JSON.parse(json) as string[];
}

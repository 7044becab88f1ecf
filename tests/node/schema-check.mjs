// schema-check.mjs — compile tool schemas the way MCP clients do.
//
//   node schema-check.mjs <tools.ndjson>
//
// tools.ndjson holds one tool a line, {"name", "inputSchema", "outputSchema"?} as
// tools/list publishes it. Each schema is compiled by the TypeScript SDK's own validator
// (AjvJsonSchemaValidator, ajv with the SDK's options: the client compiles every
// outputSchema when it lists tools, and one that fails makes listTools fail), and each
// "pattern" in it by new RegExp(pattern, "u"), as ajv and LangChain compile them.
// Prints ONE JSON document:
//   {"tools":N,"schemas":N,"patterns":N,"failures":[{"tool","where","pattern"?,"error"}]}
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const [path] = process.argv.slice(2);
if (!path) {
  console.error("usage: node schema-check.mjs <tools.ndjson>");
  process.exit(2);
}
const out = { tools: 0, schemas: 0, patterns: 0, failures: [] };

// patterns yields every "pattern" keyword of a schema (a string under that key; a
// property named "pattern" is an object, so it is walked, not taken).
function* patterns(node) {
  if (Array.isArray(node)) {
    for (const v of node) yield* patterns(v);
  } else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "pattern" && typeof v === "string") yield v;
      else yield* patterns(v);
    }
  }
}

const validator = new AjvJsonSchemaValidator(); // one per client, as the SDK has
// Quiet ajv's warnings about unknown formats: they are not failures.
console.warn = () => {};
for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
  if (!line) continue;
  const tool = JSON.parse(line);
  out.tools++;
  for (const where of ["inputSchema", "outputSchema"]) {
    const schema = tool[where];
    if (!schema) continue;
    out.schemas++;
    try {
      validator.getValidator(schema);
    } catch (e) {
      out.failures.push({ tool: tool.name, where, error: String(e?.message ?? e) });
    }
    for (const p of patterns(schema)) {
      out.patterns++;
      try {
        new RegExp(p, "u");
      } catch (e) {
        out.failures.push({ tool: tool.name, where, pattern: p, error: String(e?.message ?? e) });
      }
    }
  }
}
process.stdout.write(JSON.stringify(out) + "\n");

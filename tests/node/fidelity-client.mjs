// fidelity-client.mjs — what one MCP server shows the official TypeScript SDK client, as it
// came over the wire, so that a test can compare a server directly and through the gateway.
//
//   node fidelity-client.mjs <spec.json>
//
// spec.json: {"connect": {"command": "...", "args": [...], "cwd": "..."} | {"url": "..."},
//             "capabilities": {...},       the client's (default none)
//             "steps": [...]}
// Steps, run in order after initialize and the four lists:
//   {"op":"call","name":"x","arguments":{...},"progress":true}   tools/call
//   {"op":"read","uri":"..."}                                     resources/read
//   {"op":"get_prompt","name":"x","arguments":{...}}               prompts/get
//   {"op":"complete","ref":{...},"argument":{...}}                completion/complete
//   {"op":"set_level","level":"debug"}                            logging/setLevel
// Prints ONE JSON document: {"initialize": <result>, "lists": {"tools": [...], "resources": [...],
// "resourceTemplates": [...], "prompts": [...]} (every page; a list that fails is
// {"error": {...}}), "steps": [{"op", "result" | "error": {code, message, data},
// "notifications": [<each notification that arrived while the step ran>]}]}.
// Results, entries and errors are the JSON-RPC messages' own members, as the server sent them
// (read off the transport, before the SDK's parsing); the SDK client drives the exchange.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = spec.connect.url
  ? new StreamableHTTPClientTransport(new URL(spec.connect.url))
  : new StdioClientTransport({ ...spec.connect, stderr: "ignore" });

// Every message that arrives, in order, and the id of each request sent.
const received = [];
const sent = [];
let handler;
Object.defineProperty(transport, "onmessage", {
  configurable: true,
  get: () => (handler ? (msg, extra) => { received.push(msg); handler(msg, extra); } : undefined),
  set: (h) => { handler = h; },
});
const send = transport.send.bind(transport);
transport.send = (msg, opts) => {
  if (msg.method !== undefined && msg.id !== undefined) sent.push(msg);
  return send(msg, opts);
};

const client = new Client({ name: "fidelity-client", version: "1.0.0" }, { capabilities: spec.capabilities ?? {} });
client.fallbackNotificationHandler = async () => {};

// run sends one request through the SDK and returns the server's response to it as sent.
async function run(method, call) {
  const first = received.length;
  const firstSent = sent.length;
  let thrown;
  try {
    await call();
  } catch (e) {
    thrown = e;
  }
  const ids = sent.slice(firstSent).filter((m) => m.method === method).map((m) => m.id);
  const responses = received.slice(first).filter((m) => m.id !== undefined && ids.includes(m.id) && m.method === undefined);
  const notifications = received.slice(first).filter((m) => m.id === undefined && m.method !== undefined);
  if (responses.length === 0) {
    return { error: { message: String(thrown?.message ?? "no response") }, notifications };
  }
  return { responses, notifications };
}

const out = { steps: [] };
try {
  await client.connect(transport);
} catch (e) {
  console.log(JSON.stringify({ connectError: { message: String(e?.message ?? e) } }));
  process.exit(1);
}
out.initialize = received.find((m) => m.id === sent.find((s) => s.method === "initialize")?.id)?.result;

const lists = { tools: "tools/list", resources: "resources/list", resourceTemplates: "resources/templates/list", prompts: "prompts/list" };
const listers = {
  tools: (p) => client.listTools(p),
  resources: (p) => client.listResources(p),
  resourceTemplates: (p) => client.listResourceTemplates(p),
  prompts: (p) => client.listPrompts(p),
};
out.lists = {};
for (const [key, method] of Object.entries(lists)) {
  let cursor;
  const all = [];
  for (;;) {
    const r = await run(method, () => listers[key](cursor ? { cursor } : undefined));
    const resp = r.responses?.[0];
    if (!resp || resp.error) {
      out.lists[key] = { error: resp?.error ?? r.error };
      break;
    }
    all.push(...(resp.result[key] ?? []));
    cursor = resp.result.nextCursor;
    if (!cursor) {
      out.lists[key] = all;
      break;
    }
  }
}

for (const step of spec.steps ?? []) {
  let r;
  switch (step.op) {
    case "call":
      r = await run("tools/call", () =>
        client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined,
          step.progress ? { onprogress: () => {} } : undefined));
      break;
    case "read":
      r = await run("resources/read", () => client.readResource({ uri: step.uri }));
      break;
    case "get_prompt":
      r = await run("prompts/get", () => client.getPrompt({ name: step.name, arguments: step.arguments ?? {} }));
      break;
    case "complete":
      r = await run("completion/complete", () => client.complete({ ref: step.ref, argument: step.argument }));
      break;
    case "set_level":
      r = await run("logging/setLevel", () => client.setLoggingLevel(step.level));
      break;
    default:
      throw new Error(`unknown op ${step.op}`);
  }
  const resp = r.responses?.[0];
  const entry = { op: step.op, notifications: r.notifications };
  if (resp?.error) entry.error = resp.error;
  else if (resp) entry.result = resp.result;
  else entry.error = r.error;
  out.steps.push(entry);
}
await client.close();
console.log(JSON.stringify(out));

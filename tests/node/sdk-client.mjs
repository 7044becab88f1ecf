// sdk-client.mjs — drive an MCP server with the official TypeScript SDK client.
//
//   node sdk-client.mjs <url> <script.json>
//
// script.json is an array of steps, run in order after initialize:
//   {"op":"list"}                                    tools/list (all pages)
//   {"op":"call","name":"x","arguments":{...}}       tools/call
//   {"op":"ping"}                                    ping
//   {"op":"signal","text":"ready"}                   write "ready" and a newline on stderr
//   {"op":"wait_tools_changed","timeoutMs":20000}    wait for notifications/tools/list_changed
//                                                    (counted from the start; error on timeout)
//   {"op":"elicitation","action":"decline"}          answer later elicitation/create requests so
// Elicitation: with env EDGEMCP_ELICITATION=accept|decline|cancel|ignore the client declares the
// elicitation capability and answers every elicitation/create with that action (ignore: never
// answers); each request received is listed in the output's "elicitations" with the action given.
// Prints ONE JSON document on stdout:
//   {"serverInfo":{...},"protocolVersion":"...","capabilities":{...},
//    "steps":[{"op":"list","tools":[...]},
//             {"op":"call","result":{...}} | {"op":"call","error":{"code":N,"message":"..."}}]}
// JSON-RPC errors keep their numeric code; the message is the server's own (without the
// SDK's "MCP error N: " prefix). Extra HTTP headers: env EDGEMCP_HEADERS='{"X-API-Key":"k"}'.
// Exit 0 unless the connection itself fails (then exit 1 with {"connectError":{...}}).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, scriptPath] = process.argv.slice(2);
if (!url || !scriptPath) {
  console.error("usage: node sdk-client.mjs <url> <script.json>");
  process.exit(2);
}
const steps = JSON.parse(readFileSync(scriptPath, "utf8"));
const headers = process.env.EDGEMCP_HEADERS ? JSON.parse(process.env.EDGEMCP_HEADERS) : {};

// errorJSON keeps what a test wants to assert on: the JSON-RPC code (McpError.code; for a
// StreamableHTTPError it is the HTTP status), the server's message, and any data.
function errorJSON(e) {
  const code = typeof e?.code === "number" ? e.code : null;
  let message = String(e?.message ?? e);
  if (code !== null) message = message.replace(`MCP error ${code}: `, "");
  const out = { code, message, kind: e?.name ?? typeof e };
  if (e?.data !== undefined) out.data = e.data;
  return out;
}

let elicitAction = process.env.EDGEMCP_ELICITATION || "";
const elicitations = [];
const client = new Client(
  { name: "edgemcp-sdk-client", version: "1.0.0" },
  elicitAction ? { capabilities: { elicitation: {} } } : {},
);
if (elicitAction) {
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    elicitations.push({ params: req.params, action: elicitAction });
    if (elicitAction === "ignore") return new Promise(() => {});
    return { action: elicitAction };
  });
}
// Every tools/list_changed the server sends, from the start: a wait step
// consumes one, whether it came before the step or during it.
let toolsChanged = 0;
let onToolsChanged = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  toolsChanged++;
  onToolsChanged();
});
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
try {
  await client.connect(transport);
} catch (e) {
  process.stdout.write(JSON.stringify({ connectError: errorJSON(e) }) + "\n");
  process.exit(1);
}

const out = {
  serverInfo: client.getServerVersion(),
  protocolVersion: transport.protocolVersion,
  capabilities: client.getServerCapabilities(),
  steps: [],
};
for (const step of steps) {
  const rec = { op: step.op };
  if (step.name !== undefined) rec.name = step.name;
  try {
    switch (step.op) {
      case "list": {
        const tools = [];
        let cursor;
        do {
          const page = await client.listTools(cursor ? { cursor } : {});
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
        rec.tools = tools;
        break;
      }
      case "call":
        rec.result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
        break;
      case "ping":
        rec.result = await client.ping();
        break;
      case "elicitation":
        elicitAction = step.action;
        break;
      case "signal":
        process.stderr.write(`${step.text}\n`);
        break;
      case "wait_tools_changed": {
        const timeout = step.timeoutMs ?? 20000;
        await new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no tools/list_changed within ${timeout}ms`)), timeout);
          const check = () => {
            if (toolsChanged > 0) {
              toolsChanged--;
              clearTimeout(timer);
              resolve();
            }
          };
          onToolsChanged = check;
          check();
        });
        rec.result = { changed: true };
        break;
      }
      default:
        throw new Error(`unknown op ${JSON.stringify(step.op)}`);
    }
  } catch (e) {
    rec.error = errorJSON(e);
  }
  out.steps.push(rec);
}

if (elicitAction) out.elicitations = elicitations;
process.stdout.write(JSON.stringify(out) + "\n");
// End the session politely (DELETE); servers may answer 405, which is fine.
await transport.terminateSession().catch(() => {});
await client.close().catch(() => {});
process.exit(0);

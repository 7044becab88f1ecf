// sdk-client.mjs — drive an MCP server with the official TypeScript SDK client.
//
//   node sdk-client.mjs <url> <script.json>
//
// script.json is an array of steps, run in order after initialize, or
//   {"client":{...},"steps":[...]}
// where client declares capabilities and how to answer the server's requests:
//   "sampling": <CreateMessageResult>, "elicitation": <ElicitResult>, "roots": [<Root>...]
// (each request the server sends is recorded in the output's "requests", and every
// notifications/message in "logs").
//   {"op":"list"}                                    tools/list (all pages)
//   {"op":"call","name":"x","arguments":{...}}       tools/call
//       "progress":true        ask for progress; the notifications go in the step's "progress"
//       "cancelOnProgress":true  ask for progress and cancel the call at the first one
//   {"op":"set_level","level":"debug"}               logging/setLevel
//   {"op":"ping"}                                    ping
//   {"op":"signal","text":"ready"}                   write "ready" and a newline on stderr
//   {"op":"wait_tools_changed","timeoutMs":20000}    wait for notifications/tools/list_changed
//                                                    (counted from the start; error on timeout)
//   {"op":"list_resources"} / {"op":"list_resource_templates"} / {"op":"list_prompts"}
//                                                    (all pages; the result holds the list)
//   {"op":"read_resource","uri":"..."}               resources/read
//   {"op":"get_prompt","name":"x","arguments":{...}} prompts/get
//   {"op":"complete","ref":{...},"argument":{"name":"a","value":"v"}}  completion/complete
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
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, scriptPath] = process.argv.slice(2);
if (!url || !scriptPath) {
  console.error("usage: node sdk-client.mjs <url> <script.json>");
  process.exit(2);
}
const script = JSON.parse(readFileSync(scriptPath, "utf8"));
const steps = Array.isArray(script) ? script : script.steps;
const answers = Array.isArray(script) ? {} : (script.client ?? {});
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

// Elicitation answers: EDGEMCP_ELICITATION (and the "elicitation" step) when set, else
// the script's client.elicitation.
let elicitAction = process.env.EDGEMCP_ELICITATION || "";
const elicitations = [];
const capabilities = {};
if (answers.sampling) capabilities.sampling = {};
if (answers.elicitation || elicitAction) capabilities.elicitation = {};
if (answers.roots) capabilities.roots = {};
const client = new Client({ name: "edgemcp-sdk-client", version: "1.0.0" }, { capabilities });
const requests = [];
const logs = [];
if (answers.sampling)
  client.setRequestHandler(CreateMessageRequestSchema, (r) => {
    requests.push({ method: r.method, params: r.params });
    return answers.sampling;
  });
if (elicitAction)
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    elicitations.push({ params: req.params, action: elicitAction });
    if (elicitAction === "ignore") return new Promise(() => {});
    return { action: elicitAction };
  });
else if (answers.elicitation)
  client.setRequestHandler(ElicitRequestSchema, (r) => {
    requests.push({ method: r.method, params: r.params });
    return answers.elicitation;
  });
if (answers.roots)
  client.setRequestHandler(ListRootsRequestSchema, (r) => {
    requests.push({ method: r.method, params: r.params });
    return { roots: answers.roots };
  });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push(n.params);
});
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

// allPages follows nextCursor through a list method.
async function allPages(list, key) {
  const items = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : {});
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
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
      case "call": {
        const opts = {};
        if (step.progress || step.cancelOnProgress) {
          rec.progress = [];
          const abort = new AbortController();
          opts.signal = abort.signal;
          opts.onprogress = (p) => {
            rec.progress.push(p);
            if (step.cancelOnProgress) abort.abort("cancelled by the test client");
          };
        }
        rec.result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, opts);
        break;
      }
      case "set_level":
        rec.result = await client.setLoggingLevel(step.level);
        break;
      case "ping":
        rec.result = await client.ping();
        break;
      case "list_resources":
        rec.result = { resources: await allPages((c) => client.listResources(c), "resources") };
        break;
      case "list_resource_templates":
        rec.result = { resourceTemplates: await allPages((c) => client.listResourceTemplates(c), "resourceTemplates") };
        break;
      case "list_prompts":
        rec.result = { prompts: await allPages((c) => client.listPrompts(c), "prompts") };
        break;
      case "read_resource":
        rec.result = await client.readResource({ uri: step.uri });
        break;
      case "get_prompt":
        rec.result = await client.getPrompt({ name: step.name, arguments: step.arguments ?? {} });
        break;
      case "complete":
        rec.result = await client.complete({ ref: step.ref, argument: step.argument });
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

out.requests = requests;
out.logs = logs;
if (elicitAction) out.elicitations = elicitations;
process.stdout.write(JSON.stringify(out) + "\n");
// End the session politely (DELETE); servers may answer 405, which is fine.
await transport.terminateSession().catch(() => {});
await client.close().catch(() => {});
process.exit(0);

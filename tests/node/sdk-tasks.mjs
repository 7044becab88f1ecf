// sdk-tasks.mjs — call a tool as an MCP task with the official TypeScript SDK client's
// experimental tasks API (2025-11-25), and cancel another.
//
//   node sdk-tasks.mjs <url> <tool> <argsDone.json> <argsCancel.json>
//
// Lists the tools (the SDK learns which run as tasks), then:
//   done:   callToolStream(tool, argsDone) to its end; the message types seen and the result
//   cancel: callToolStream(tool, argsCancel) until its task is created, then cancelTask and
//           getTask; on stderr "cancelled <taskId>" once the cancel was answered
// Prints ONE JSON document on stdout:
//   {"protocolVersion":"...","taskSupport":"...","done":{"types":[...],"result":{...}},
//    "cancel":{"taskId":"...","cancelled":{...},"after":{...}}}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, argsDone, argsCancel] = process.argv.slice(2);
if (!url || !tool || !argsDone || !argsCancel) {
  console.error("usage: node sdk-tasks.mjs <url> <tool> <argsDone.json> <argsCancel.json>");
  process.exit(2);
}
const client = new Client({ name: "edgemcp-sdk-tasks", version: "1.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const out = { protocolVersion: transport.protocolVersion };
const { tools } = await client.listTools();
out.taskSupport = tools.find((t) => t.name === tool)?.execution?.taskSupport ?? null;

const done = { types: [] };
for await (const msg of client.experimental.tasks.callToolStream({ name: tool, arguments: JSON.parse(argsDone) })) {
  done.types.push(msg.type);
  if (msg.type === "taskCreated") done.taskId = msg.task.taskId;
  if (msg.type === "result") done.result = msg.result;
  if (msg.type === "error") done.error = { code: msg.error?.code, message: String(msg.error?.message) };
}
out.done = done;

const cancel = {};
for await (const msg of client.experimental.tasks.callToolStream({ name: tool, arguments: JSON.parse(argsCancel) })) {
  if (msg.type === "taskCreated") {
    cancel.taskId = msg.task.taskId;
    break;
  }
  if (msg.type === "result" || msg.type === "error") {
    cancel.unexpected = msg.type;
    break;
  }
}
if (cancel.taskId) {
  // Give the backend a moment to start the work the cancel must stop.
  await new Promise((r) => setTimeout(r, 500));
  cancel.cancelled = await client.experimental.tasks.cancelTask(cancel.taskId);
  cancel.after = await client.experimental.tasks.getTask(cancel.taskId);
  console.error(`cancelled ${cancel.taskId}`);
}
out.cancel = cancel;
await client.close();
console.log(JSON.stringify(out));

// conformance-upstream.mjs — an MCP server, built on the official TypeScript SDK, with the
// fixture tools the conformance suite's tool scenarios call (test_simple_text,
// test_tool_with_progress, test_sampling, ...), served over streamable HTTP:
//
//   node conformance-upstream.mjs <port>
//
// The suite's scenarios run against it directly and against the gateway fronting it as
// an MCP source (caddymodule/forward_conformance_test.go): what passes directly must pass
// through the gateway. Prints "listening <port>" on stdout once it listens.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const port = Number(process.argv[2]);
// 1x1 PNG and a short silent WAV.
const png =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const wav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const noArgs = { type: "object", properties: {} };
const text = (t) => ({ content: [{ type: "text", text: t }] });
const resource = {
  type: "resource",
  resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
};

const tools = [
  { name: "test_simple_text", description: "Returns simple text", inputSchema: noArgs,
    run: async () => text("This is a simple text response for testing.") },
  { name: "test_image_content", description: "Returns an image", inputSchema: noArgs,
    run: async () => ({ content: [{ type: "image", data: png, mimeType: "image/png" }] }) },
  { name: "test_audio_content", description: "Returns audio", inputSchema: noArgs,
    run: async () => ({ content: [{ type: "audio", data: wav, mimeType: "audio/wav" }] }) },
  { name: "test_embedded_resource", description: "Returns an embedded resource", inputSchema: noArgs,
    run: async () => ({ content: [resource] }) },
  { name: "test_multiple_content_types", description: "Returns text, an image and a resource", inputSchema: noArgs,
    run: async () => ({
      content: [{ type: "text", text: "Multiple content types test:" }, { type: "image", data: png, mimeType: "image/png" }, resource],
    }) },
  { name: "test_error_handling", description: "Always fails", inputSchema: noArgs,
    run: async () => ({ isError: true, content: [{ type: "text", text: "This tool intentionally returns an error for testing" }] }) },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs", inputSchema: noArgs,
    run: async (_args, extra, server) => {
      for (const [i, data] of ["Tool execution started", "Tool processing data", "Tool execution completed"].entries()) {
        if (i > 0) await sleep(50);
        // As part of the request (on its own SSE stream, before the result),
        // as the spec asks of messages about a request: sent on the
        // session's standalone stream instead, the last one may reach the
        // gateway after the result, and nothing can order them again.
        await extra.sendNotification({ method: "notifications/message", params: { level: "info", data } });
      }
      return text("Tool with logging executed successfully");
    } },
  { name: "test_tool_with_progress", description: "Reports progress while it runs", inputSchema: noArgs,
    run: async (_args, extra) => {
      const token = extra._meta?.progressToken;
      for (const [i, progress] of [0, 50, 100].entries()) {
        if (i > 0) await sleep(50);
        if (token !== undefined)
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, total: 100 } });
      }
      return text(`Progress reported${token === undefined ? " (no token)" : ""}`);
    } },
  { name: "test_sampling", description: "Asks the client's LLM",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
    run: async (args, extra) => {
      const r = await extra.sendRequest(
        { method: "sampling/createMessage",
          params: { messages: [{ role: "user", content: { type: "text", text: args.prompt } }], maxTokens: 100 } },
        CreateMessageResultSchema,
      );
      return text(`LLM response: ${r.content?.text ?? JSON.stringify(r.content)}`);
    } },
  { name: "test_elicitation", description: "Asks the user",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
    run: async (args, extra) => {
      const r = await extra.sendRequest(
        { method: "elicitation/create",
          params: { message: args.message, requestedSchema: { type: "object", properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" } }, required: ["username", "email"] } } },
        ElicitResultSchema,
      );
      return text(`User response: ${JSON.stringify(r)}`);
    } },
  { name: "test_elicitation_sep1034_defaults", description: "Asks the user, with defaults", inputSchema: noArgs,
    run: async (_args, extra) => {
      const r = await extra.sendRequest(
        { method: "elicitation/create",
          params: { message: "Please review and update the form fields with defaults", requestedSchema: { type: "object", properties: {
            name: { type: "string", description: "User name", default: "John Doe" },
            age: { type: "integer", description: "User age", default: 30 },
            score: { type: "number", description: "User score", default: 95.5 },
            status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
            verified: { type: "boolean", description: "Verification status", default: true } } } } },
        ElicitResultSchema,
      );
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    } },
  { name: "test_elicitation_sep1330_enums", description: "Asks the user, with every kind of enum", inputSchema: noArgs,
    run: async (_args, extra) => {
      const r = await extra.sendRequest(
        { method: "elicitation/create",
          params: { message: "Please select options from the enum fields", requestedSchema: { type: "object", properties: {
            untitledSingle: { type: "string", description: "Select one option", enum: ["option1", "option2", "option3"] },
            titledSingle: { type: "string", description: "Select one option with titles", oneOf: [
              { const: "value1", title: "First Option" }, { const: "value2", title: "Second Option" }, { const: "value3", title: "Third Option" }] },
            legacyEnum: { type: "string", description: "Select one option (legacy)", enum: ["opt1", "opt2", "opt3"],
              enumNames: ["Option One", "Option Two", "Option Three"] },
            untitledMulti: { type: "array", description: "Select multiple options", minItems: 1, maxItems: 3,
              items: { type: "string", enum: ["option1", "option2", "option3"] } },
            titledMulti: { type: "array", description: "Select multiple options with titles", minItems: 1, maxItems: 3,
              items: { anyOf: [{ const: "value1", title: "First Choice" }, { const: "value2", title: "Second Choice" },
                { const: "value3", title: "Third Choice" }] } } } } } },
        ElicitResultSchema,
      );
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    } },
  { name: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features",
    inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } }, additionalProperties: false },
    run: async (args) => text(`Hello ${args.name ?? "nobody"}`) },
];

function newServer() {
  const server = new Server({ name: "conformance-upstream", version: "1.0.0" }, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = tools.find((t) => t.name === req.params.name);
    if (!tool) throw new Error(`unknown tool ${req.params.name}`);
    return tool.run(req.params.arguments ?? {}, { ...extra, _meta: req.params._meta }, server);
  });
  return server;
}

const sessions = new Map();
createServer(async (req, res) => {
  const sid = req.headers["mcp-session-id"];
  let transport = sid && sessions.get(sid);
  if (!transport) {
    if (req.method !== "POST" || sid) {
      res.writeHead(404).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res);
}).listen(port, "127.0.0.1", () => console.log(`listening ${port}`));

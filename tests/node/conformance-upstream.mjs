// conformance-upstream.mjs — an MCP server, built on the official TypeScript SDK, with the
// fixtures the conformance suite's server scenarios use (tools test_simple_text,
// test_tool_with_progress, test_sampling, ...; resources test://static-text, a template,
// test://watched-resource to subscribe to; prompts test_simple_prompt, ...; completion),
// served over streamable HTTP:
//
//   node conformance-upstream.mjs <port>
//   node conformance-upstream.mjs --stdio [--no-templates]
//
// With --stdio one session is served on stdin/stdout instead (the fidelity test runs it as
// a stdio source); --no-templates leaves resources/templates/list unanswered (-32601), as
// some servers that declare resources do.
// The suite's scenarios run against it directly and against the gateway fronting it as
// an MCP source (caddymodule/forward_conformance_test.go): what passes directly must pass
// through the gateway. Prints "listening <port>" on stdout once it listens.
//
// Beyond the suite: the tool notify_resource_updated {uri} sends
// notifications/resources/updated to every session subscribed to uri and answers
// "notified N sessions", so a test can both trigger updates and see what the gateway
// subscribed upstream.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const stdio = process.argv[2] === "--stdio";
const noTemplates = process.argv.includes("--no-templates");
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
    // Fields of a tools/list entry beyond the usual, one no SDK models among
    // them: a gateway passes them on as they are.
    listed: { title: "Simple text", icons: [{ src: "data:image/png;base64," + png, mimeType: "image/png", sizes: ["1x1"] }],
      annotations: { title: "Simple text (annotation)", readOnlyHint: true, "x-vendor-hint": 1 },
      execution: { taskSupport: "forbidden" }, _meta: { ui: { resourceUri: "ui://test/simple.html" } },
      "x-vendor": { kept: true } },
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
  { name: "test_roots", description: "Asks the client for its roots", inputSchema: noArgs,
    run: async (_args, extra) => {
      const r = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema);
      return text(JSON.stringify(r.roots));
    } },
  { name: "notify_resource_updated", description: "Tells the sessions subscribed to uri that it changed",
    inputSchema: { type: "object", properties: { uri: { type: "string" } }, required: ["uri"] },
    run: async (args) => {
      const subscribed = [...(watchers.get(args.uri) ?? [])];
      await Promise.all(subscribed.map((s) => s.sendResourceUpdated({ uri: args.uri })));
      return text(`notified ${subscribed.length} sessions`);
    } },
];

const resources = [
  { uri: "test://static-text", name: "static-text", description: "A static text resource", mimeType: "text/plain",
    read: () => ({ text: "This is the content of the static text resource." }) },
  { uri: "test://static-binary", name: "static-binary", description: "A static binary resource", mimeType: "image/png",
    read: () => ({ blob: png }) },
  { uri: "test://watched-resource", name: "watched-resource", description: "A resource to subscribe to", mimeType: "text/plain",
    read: () => ({ text: "Watched resource content." }) },
];
const templateRe = /^test:\/\/template\/([^/]+)\/data$/;
const readResource = (uri) => {
  const r = resources.find((r) => r.uri === uri);
  if (r) return { uri, mimeType: r.mimeType, ...r.read() };
  const m = templateRe.exec(uri);
  if (m) return { uri, mimeType: "application/json", text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) };
  return undefined;
};

const userText = (t) => ({ role: "user", content: { type: "text", text: t } });
const prompts = [
  { name: "test_simple_prompt", description: "A simple prompt without arguments",
    get: () => [userText("This is a simple prompt for testing.")] },
  { name: "test_prompt_with_arguments", description: "A prompt with two required arguments",
    arguments: [{ name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true }],
    get: (a) => [userText(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`)] },
  { name: "test_prompt_with_embedded_resource", description: "A prompt with an embedded resource",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    get: (a) => [
      { role: "user", content: { type: "resource", resource: { uri: a.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } } },
      userText("Please process the embedded resource above."),
    ] },
  { name: "test_prompt_with_image", description: "A prompt with an image",
    get: () => [{ role: "user", content: { type: "image", data: png, mimeType: "image/png" } }, userText("Please analyze the image above.")] },
];
const completions = ["paris", "park", "party", "test", "testing"];

// The sessions (one Server each) subscribed to each URI.
const watchers = new Map();
const unwatch = (uri, server) => {
  watchers.get(uri)?.delete(server);
  if (watchers.get(uri)?.size === 0) watchers.delete(uri);
};

function newServer() {
  const server = new Server({ name: "conformance-upstream", version: "1.0.0" },
    { capabilities: { tools: {}, logging: {}, resources: { subscribe: true }, prompts: {}, completions: {} } });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: resources.map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType, "x-vendor": { uri } })),
  }));
  if (!noTemplates)
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: [{ uriTemplate: "test://template/{id}/data", name: "template-data",
        description: "Data for one id", mimeType: "application/json" }],
    }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const contents = readResource(req.params.uri);
    if (!contents) throw new McpError(-32002, `Resource not found: ${req.params.uri}`);
    // A result's own _meta, which a gateway keeps.
    return { contents: [contents], _meta: { "io.edgemcp.test/read": req.params.uri } };
  });
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    if (!readResource(req.params.uri)) throw new McpError(-32002, `Resource not found: ${req.params.uri}`);
    if (!watchers.has(req.params.uri)) watchers.set(req.params.uri, new Set());
    watchers.get(req.params.uri).add(server);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    unwatch(req.params.uri, server);
    return {};
  });
  server.onclose = () => { for (const uri of [...watchers.keys()]) unwatch(uri, server); };
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: prompts.map(({ name, description, arguments: args }) => ({ name, description, arguments: args, _meta: { "x-vendor": name } })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const p = prompts.find((p) => p.name === req.params.name);
    if (!p) throw new McpError(-32602, `unknown prompt ${req.params.name}`);
    return { messages: p.get(req.params.arguments ?? {}) };
  });
  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const values = completions.filter((v) => v.startsWith(req.params.argument.value ?? ""));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map(({ name, description, inputSchema, listed }) => ({ name, description, inputSchema, ...listed })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const tool = tools.find((t) => t.name === req.params.name);
    if (!tool) throw new Error(`unknown tool ${req.params.name}`);
    return tool.run(req.params.arguments ?? {}, { ...extra, _meta: req.params._meta }, server);
  });
  return server;
}

if (stdio) {
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  await newServer().connect(new StdioServerTransport());
}

const sessions = new Map();
// Only loopback names in Host (the suite's dns-rebinding-protection scenario).
const loopback = new Set(["127.0.0.1", "localhost", "[::1]"]);
if (!stdio) createServer(async (req, res) => {
  const host = (req.headers.host ?? "").replace(/:\d+$/, "");
  if (!loopback.has(host)) {
    res.writeHead(403).end();
    return;
  }
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

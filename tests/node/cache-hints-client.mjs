// The TypeScript SDK client 2.x (protocol 2026-07-28) against the gateway:
// reads resources and lists, and prints what it saw of SEP-2549's hints,
// and whether a second read of a resource was served from its own cache
// (the gateway's handler counts its runs in the text). Usage:
// node cache-hints-client.mjs <url> <uri...>
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, ...uris] = process.argv.slice(2);
const client = new Client({ name: "edgemcp-cache-hints", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const out = { protocol: client.getNegotiatedProtocolVersion?.() ?? null, reads: {} };
for (const uri of uris) {
  const first = await client.readResource({ uri });
  const second = await client.readResource({ uri });
  out.reads[uri] = {
    ttlMs: first.ttlMs, cacheScope: first.cacheScope,
    first: first.contents[0].text, second: second.contents[0].text,
  };
}
const tools = await client.listTools();
out.tools = { ttlMs: tools.ttlMs, cacheScope: tools.cacheScope };
console.log(JSON.stringify(out));
await client.close();

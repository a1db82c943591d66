// Drives horst's MCP endpoint with the official TypeScript SDK (@modelcontextprotocol/sdk).
// The SDK validates structuredContent against each tool's outputSchema.
// Usage: node client.mjs URL [KEY MAPFILE REPLAYFILE]; prints "ts client: OK".
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, mapFile, replayFile] = process.argv.slice(2);
const TINY = "gcv-map 1\nname: Kurz\nsize: 8 3\ngrid:\n........\n........\nGGGGGGGG\nentities:\nstart 1 1\nnest 5 1\n";
// A hole between the start and the nest: walking right falls out of the map.
const HOLE = "gcv-map 1\nname: Loch\nsize: 10 3\ngrid:\n..........\n..........\nGGG...GGGG\nentities:\nstart 1 1\nnest 8 1\n";

function structured(result, ok = true) {
  assert.equal(Boolean(result.isError), !ok, JSON.stringify(result));
  const text = JSON.parse(result.content[0].text);
  if (ok) assert.deepEqual(text, result.structuredContent);
  else assert.equal(result.structuredContent, undefined);
  return text;
}

const headers = key ? { Authorization: `Bearer ${key}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client({ name: "horst-ts-test", version: "1.0.0" });
await client.connect(transport);
assert.ok(["2025-11-25", "2025-06-18"].includes(transport.protocolVersion), transport.protocolVersion);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
assert.ok(names.includes("validate_map") && names.includes("render_map"), names.join(","));
assert.ok(structured(await client.callTool({ name: "get_map_format", arguments: {} })).format.includes("gcv-map"));
assert.equal(structured(await client.callTool({ name: "validate_map", arguments: { map: TINY } })).valid, true);
const r = structured(await client.callTool({ name: "render_map", arguments: { map: TINY, x: 0, y: 0, width: 8, height: 3 } }));
assert.ok(r.text.length > 0);
// A window partly outside the map is clipped, and with image a PNG comes along.
const pic = await client.callTool({ name: "render_map", arguments: { map: TINY, x: -2, y: 0, width: 20, height: 3, image: true } });
const clipped = structured(pic);
assert.equal(clipped.clipped, true);
assert.deepEqual(clipped.window, { x: 0, y: 0, width: 8, height: 3 });
assert.equal(pic.content[1].type, "image");
assert.equal(pic.content[1].mimeType, "image/png");
assert.deepEqual([...Buffer.from(pic.content[1].data, "base64").subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
for (const t of tools) {
  if (["playtest_map", "submit_level", "list_threads"].includes(t.name)) assert.ok(t.description.startsWith("Needs an agent key"), t.description);
}
// Resources and the prompt beside the tools (issue 32).
const { resources } = await client.listResources();
assert.deepEqual(resources.slice(0, 3).map((r) => r.uri), ["gcv://format", "gcv://palette", "ui://gcv/player"]);
const level = await client.readResource({ uri: "gcv://levels/erste-schritte" });
assert.ok(level.contents[0].text.includes("gcv-map 1"));
const levelMeta = JSON.parse(level.contents[1].text);
assert.equal(levelMeta.name, "erste-schritte");
assert.ok(levelMeta.replay.actions.length > 0);
const { resourceTemplates } = await client.listResourceTemplates();
assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ["gcv://levels/{name}", "gcv://revisions/{revisionId}"]);
const app = await client.readResource({ uri: "ui://gcv/player" });
assert.equal(app.contents[0].mimeType, "text/html;profile=mcp-app");
const { prompts } = await client.listPrompts();
assert.deepEqual(prompts.map((p) => p.name), ["design_level"]);
const prompt = await client.getPrompt({ name: "design_level", arguments: { theme: "Gipfelsturm", size: "large", difficulty: "hard" } });
assert.ok(prompt.messages[0].content.text.includes("Gipfelsturm"));
await assert.rejects(client.readResource({ uri: "gcv://levels/gibt-es-nicht" }));
const uiTools = tools.filter((t) => t._meta?.ui?.resourceUri === "ui://gcv/player").map((t) => t.name).sort();
assert.deepEqual(uiTools, ["get_level", "playtest_map", "simulate_replay"]);

if (key) {
  const LEVEL = readFileSync(mapFile, "utf8");
  const REPLAY = JSON.parse(readFileSync(replayFile, "utf8"));
  const p = await client.callTool({ name: "playtest_map", arguments: { map: TINY, idempotencyKey: "ts-p1" } });
  if (p.isError) assert.equal(structured(p, false).error.code, "engine_unavailable");
  else assert.equal(structured(p).outcome, "won");
  const s = structured(await client.callTool({ name: "simulate_replay", arguments: { map: LEVEL, replay: REPLAY, idempotencyKey: "ts-s1" } }));
  assert.equal(s.won, true);
  assert.equal(s.deathCause, null);
  const spikes = "gcv-map 1\nname: Stacheln\nsize: 6 3\ngrid:\n......\n..^^..\nGGGGGG\nentities:\nstart 0 1\nnest 5 1\n";
  const run = { seed: 1, actions: [{ action: 8, ticks: 120 }] };
  const lost = structured(await client.callTool({ name: "simulate_replay", arguments: { map: spikes, replay: run, idempotencyKey: "ts-s2" } }));
  assert.equal(lost.outcome, "lost");
  assert.deepEqual(lost.deathCause, { cause: "spikes", x: 2, y: 1 });
  const walk = { seed: 1, actions: [{ action: 8, ticks: 240 }] };
  const fell = structured(await client.callTool({ name: "simulate_replay", arguments: { map: HOLE, replay: walk, idempotencyKey: "ts-s3" } }));
  assert.equal(fell.outcome, "lost");
  assert.equal(fell.deathCause.cause, "fell_out");
  const args = { name: "ts-level", map: LEVEL, replay: REPLAY, idempotencyKey: "ts-sub1" };
  const sub = structured(await client.callTool({ name: "submit_level", arguments: args }));
  assert.equal(sub.state, "labor");
  const again = structured(await client.callTool({ name: "submit_level", arguments: args }));
  assert.equal(again.revisionId, sub.revisionId);
  assert.equal(again.replayed, true);
  const st = structured(await client.callTool({ name: "get_submission", arguments: { jobId: sub.jobId } }));
  assert.equal(st.revisionState, "labor");
  const mine = structured(await client.callTool({ name: "my_submissions", arguments: {} }));
  assert.equal(mine.items.length, 1);
  const labor = structured(await client.callTool({ name: "list_labor", arguments: {} }));
  assert.equal(labor.items[0].revisionId, sub.revisionId);
  const aloneResult = await client.callTool({ name: "get_level", arguments: { revisionId: sub.revisionId } });
  const alone = structured(aloneResult);
  assert.equal(alone.name, "ts-level");
  assert.equal(aloneResult.content[1].type, "resource_link");
  assert.equal(aloneResult.content[1].uri, `gcv://revisions/${sub.revisionId}`);
  // A shipped level, published at first start as a promoted revision, read by name.
  const shipped = structured(await client.callTool({ name: "get_level", arguments: { name: "erste-schritte" } }));
  assert.equal(shipped.name, "erste-schritte");
  assert.equal(shipped.state, "promoted");
  assert.ok(shipped.map.includes("\ngcv-map 1\n"));
  assert.equal(shipped.owner, "gcv");
}
await client.close();
console.log("ts client: OK");

// A browser MCP Apps host for tests/it/mcp_app.rs, built on the official packages the way the
// ext-apps reference host (examples/basic-host) is: the MCP client (@modelcontextprotocol/client)
// talks to horst's /api/mcp, and the ext-apps AppBridge drives the app in an iframe. esbuild
// bundles this file for the page (the test does, into its copy of the web directory).
//
// The test calls `hostShow(tool, args)`: the host calls the tool, reads the app the tool names
// in _meta.ui.resourceUri, renders it in a sandboxed iframe under the reference host's CSP
// (built from the resource's _meta.ui.csp), and passes the call's input and result in.
// Everything the app asks of the host is recorded in `window.hostLog` for the test to read.
// hostShow's options: `strict` (no WebAssembly), `failRead` (resources/read fails),
// `slowRead` (resources/read answers late) and `height` (the frame's first height), each
// explained where it is used.

import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const HOST = { name: "horst-test-host", version: "1.0.0" };

/** What the apps sent the host, in order: `{ app, kind, params }`. */
const hostLog = [];
window.hostLog = hostLog;
/** One entry per hostShow: `{ tool, result, resource, error }`. */
window.hostCalls = [];

let server = null;

async function connect() {
  if (server) return server;
  const key = new URLSearchParams(location.hash.slice(1)).get("key");
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const client = new Client(HOST);
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", location.origin), { requestInit: { headers } }),
  );
  const { tools } = await client.listTools();
  server = { client, tools: new Map(tools.map((t) => [t.name, t])) };
  return server;
}

/** The reference host's policy: nothing from the network unless the resource declares it.
 * `strict` leaves out 'unsafe-eval', as the MCP Apps default policy does (no WebAssembly). */
function csp(declared = {}, strict = false) {
  const clean = (list) => (list || []).filter((d) => typeof d === "string" && !/[;\r\n'" ]/.test(d)).join(" ");
  const resources = clean(declared.resourceDomains);
  const connects = clean(declared.connectDomains);
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${strict ? "" : "'unsafe-eval'"} ${resources}`.replace(/ +/g, " ").trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: blob: ${resources}`.trim(),
    `font-src data: ${resources}`.trim(),
    connects ? `connect-src ${connects}` : "connect-src 'none'",
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** The page with the policy as the first element of its head. */
function withPolicy(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  return html.replace(/<head[^>]*>/i, (head) => head + meta);
}

/** Starts showing a call in a new frame; returns its number (the test polls hostCalls). */
window.hostShow = (toolName, args, options = {}) => {
  const call = { tool: toolName, result: null, resource: null, error: null, ready: false };
  window.hostCalls.push(call);
  const app = window.hostCalls.length - 1;
  show(app, call, toolName, args, options).catch((e) => {
    call.error = String((e && e.stack) || e);
  });
  return app;
};

async function show(app, call, toolName, args, options) {
  {
    const { client, tools } = await connect();
    const tool = tools.get(toolName);
    if (!tool) throw new Error(`the server has no tool ${toolName}`);
    const uri = getToolUiResourceUri(tool);
    if (!uri) throw new Error(`${toolName} names no app in _meta.ui.resourceUri`);
    const result = await client.callTool({ name: toolName, arguments: args });
    call.result = result;
    const read = await client.readResource({ uri });
    if (read.contents.length !== 1) throw new Error(`${uri} has ${read.contents.length} contents`);
    const content = read.contents[0];
    if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is ${content.mimeType}`);
    const ui = (content._meta && content._meta.ui) || {};
    call.resource = { uri, bytes: content.text.length, meta: content._meta || null };

    const frame = document.createElement("iframe");
    frame.id = `app-${app}`;
    frame.title = `${toolName} app`;
    frame.setAttribute("sandbox", "allow-scripts");
    // `height`: the frame's height before the app reports its own (hosts start at their own).
    if (options.height) frame.style.height = `${options.height}px`;
    document.getElementById("apps").append(frame);

    const caps = client.getServerCapabilities() || {};
    const bridge = new AppBridge(
      client,
      HOST,
      { openLinks: {}, serverTools: caps.tools, serverResources: caps.resources, updateModelContext: { text: {}, structuredContent: {} } },
      { hostContext: { toolInfo: { tool }, theme: "light", displayMode: "inline" } },
    );
    const record = (kind) => (params) => hostLog.push({ app, kind, params });
    bridge.onsizechange = (params) => {
      record("size-changed")(params);
      if (params.height) frame.style.height = `${params.height}px`;
    };
    bridge.onupdatemodelcontext = async (params) => {
      record("update-model-context")(params);
      return {};
    };
    bridge.onmessage = async (params) => {
      record("message")(params);
      return {};
    };
    bridge.onloggingmessage = record("log");
    const initialized = new Promise((resolve) => {
      bridge.oninitialized = () => {
        record("initialized")({});
        resolve();
      };
    });
    await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
    // With a client, connect() sets the bridge to forward these to the server; the host
    // records them on the way (the app asks for them only after the result below).
    bridge.onreadresource = async (params) => {
      record("resources/read")(params);
      // `failRead`: a host whose backend cannot read the resource right now.
      if (options.failRead) throw new Error("the host could not read the resource");
      // `slowRead`: a host whose backend takes that many ms to answer.
      if (options.slowRead) await new Promise((r) => setTimeout(r, options.slowRead));
      return client.readResource(params);
    };
    bridge.oncalltool = async (params) => {
      record("tools/call")(params);
      return client.callTool(params);
    };
    frame.srcdoc = withPolicy(content.text, csp(ui.csp, options.strict));
    await initialized;
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
    call.ready = true;
  }
}

document.getElementById("host-status").textContent = "ready";

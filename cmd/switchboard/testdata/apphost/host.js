// The host side of TestBrowserRendersApp, as a host renders an app tool:
// connect to the MCP server at ?mcp= claiming the MCP Apps extension, list
// its tools, find ?tool=, read the ui:// resource its _meta.ui names, run
// that HTML in a sandboxed frame connected to the AppBridge (which routes
// the app's own tools/call to the server), then call the tool as the model
// would and hand the app its input and result. window.host is the promise
// of what it saw; window.appCalls lists the tools/call requests the app
// made through the bridge and how each ended.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const query = new URLSearchParams(location.search);
const endpoint = new URL(query.get("mcp"), location.href);
const toolName = query.get("tool");
window.appCalls = [];

async function host() {
  const client = new Client(
    { name: "switchboard-test-host", version: "0.0.0" },
    { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(endpoint));
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) {
    throw new Error(`tools/list has no ${toolName}: ${tools.map((t) => t.name).join(", ")}`);
  }
  const uri = getToolUiResourceUri(tool);
  const { contents } = await client.readResource({ uri });
  const ui = contents.find((c) => c.uri === uri);
  if (!ui || ui.mimeType !== RESOURCE_MIME_TYPE || typeof ui.text !== "string") {
    throw new Error(`resources/read ${uri}: no ${RESOURCE_MIME_TYPE} text in ${JSON.stringify(contents).slice(0, 200)}`);
  }

  const frame = document.getElementById("app");
  const bridge = new AppBridge(
    client,
    { name: "switchboard-test-host", version: "0.0.0" },
    { serverTools: {}, serverResources: {}, logging: {} },
    { hostContext: { theme: "light", displayMode: "inline", platform: "web" } },
  );
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  // The bridge routes the app's tools/call to the client; record each.
  const route = bridge.oncalltool;
  bridge.oncalltool = async (params, extra) => {
    const call = { name: params.name };
    window.appCalls.push(call);
    try {
      const result = await route(params, extra);
      call.result = result;
      return result;
    } catch (err) {
      call.error = String(err);
      throw err;
    }
  };
  frame.srcdoc = ui.text;
  await initialized;

  // The model's call of the tool, whose input and result the app shows.
  const args = {};
  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name: toolName, arguments: args });
  await bridge.sendToolResult(result);
  return { tools: tools.map((t) => t.name), uri, uiBytes: ui.text.length, result };
}

window.host = host();

// mcp-node: a small fixture MCP server in plain Node (>= 18, no npm
// dependencies) for tapedeck's tests. It speaks MCP 2025-06-18 / 2025-11-25
// over stdio (JSON-RPC 2.0, one JSON object per line).
//
// Where it differs from ../go: its output depends on the wall clock and on
// randomness the way Node servers' does, so a pinned clock decides whether two
// runs agree: the tool `now` returns new Date().toISOString(), Math.random()
// and crypto.randomUUID(), and resources/list cursors are
// crypto.randomUUID() values the client must send back.
//
// Tools: echo {text}, add {a, b}, fail (isError), slow {steps=3, ms=20}
// (notifications/progress when the call has a progressToken), ask {prompt}
// (sampling/createMessage), roots (roots/list), elicit (elicitation/create),
// now. Resources: fixture://notes/1..4, two per page. Prompts: greet {name}.
// Tool calls run concurrently; at stdin EOF it fails what it still waits on
// the client for, lets running calls finish and exits 0. Logs go to stderr.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";

const log = (...args) => console.error("mcp-node:", ...args);
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const text = (t, isError) => ({ content: [{ type: "text", text: t }], ...(isError ? { isError: true } : {}) });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const versions = ["2025-11-25", "2025-06-18"];
let clientCaps = {};
let nextId = 1;
let closed = false;
const pending = new Map(); // id of our request -> {resolve, reject}
const running = new Set(); // promises of tool calls in flight
const cursors = new Map(); // issued cursor -> offset

const str = (s) => ({ type: "string", ...(s ? { description: s } : {}) });
const tools = [
  { name: "echo", description: "Returns its text.", inputSchema: { type: "object", properties: { text: str() }, required: ["text"] } },
  { name: "add", description: "Adds a and b.", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } },
  { name: "fail", description: "Always fails, as a tool (isError).", inputSchema: { type: "object" } },
  { name: "slow", description: "Takes steps steps of ms milliseconds, with progress.", inputSchema: { type: "object", properties: { steps: { type: "integer" }, ms: { type: "integer" } } } },
  { name: "ask", description: "Asks the client's model (sampling/createMessage).", inputSchema: { type: "object", properties: { prompt: str() }, required: ["prompt"] } },
  { name: "roots", description: "Lists the client's roots.", inputSchema: { type: "object" } },
  { name: "elicit", description: "Asks the user for a name.", inputSchema: { type: "object" } },
  { name: "now", description: "The time, a random number and a UUID.", inputSchema: { type: "object" } },
];
const notes = [1, 2, 3, 4].map((n) => ({ uri: `fixture://notes/${n}`, name: `note-${n}`, mimeType: "text/plain" }));

// request sends a request to the client and resolves with its result.
function request(method, params) {
  if (closed) return Promise.reject(new Error("stdin closed"));
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

async function callTool(params) {
  const args = params.arguments ?? {};
  const token = params._meta?.progressToken;
  switch (params.name) {
    case "echo":
      return text(String(args.text ?? ""));
    case "add":
      if (typeof args.a !== "number" || typeof args.b !== "number") return text("add needs numbers a and b", true);
      return text(String(args.a + args.b));
    case "fail":
      return text("the fail tool failed", true);
    case "slow": {
      const steps = Number.isInteger(args.steps) ? args.steps : 3;
      const ms = Number.isInteger(args.ms) ? args.ms : 20;
      for (let i = 1; i <= steps; i++) {
        await sleep(ms);
        if (token !== undefined) {
          send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: i, total: steps, message: `step ${i} of ${steps}` } });
        }
      }
      return text(`done after ${steps} steps`);
    }
    case "ask":
    case "roots":
    case "elicit": {
      const [capability, method, req] = {
        ask: ["sampling", "sampling/createMessage", { messages: [{ role: "user", content: { type: "text", text: String(args.prompt ?? "") } }], maxTokens: 100 }],
        roots: ["roots", "roots/list", {}],
        elicit: ["elicitation", "elicitation/create", { message: "What is your name?", requestedSchema: { type: "object", properties: { name: str() }, required: ["name"] } }],
      }[params.name];
      if (!(capability in clientCaps)) return text(`the client did not declare the ${capability} capability`, true);
      try {
        const res = await request(method, req);
        if (params.name === "ask") return text(String(res?.content?.text));
        if (params.name === "roots") return text(`${res.roots.length} root(s): ${res.roots.map((r) => r.uri).join(" ")}`);
        return text(res.action === "accept" ? `Hello, ${res.content?.name}!` : `elicitation ${res.action}`);
      } catch (err) {
        return text(`${method}: ${err.message}`, true);
      }
    }
    case "now":
      return text(`now ${new Date().toISOString()} random ${Math.random()} uuid ${randomUUID()}`);
  }
  throw { code: -32602, message: `unknown tool: ${params.name}` };
}

function resourcesList(params) {
  let from = 0;
  if (params.cursor !== undefined) {
    if (!cursors.has(params.cursor)) throw { code: -32602, message: `invalid cursor ${JSON.stringify(params.cursor)}` };
    from = cursors.get(params.cursor);
  }
  const to = Math.min(from + 2, notes.length);
  const result = { resources: notes.slice(from, to) };
  if (to < notes.length) {
    const cursor = randomUUID();
    cursors.set(cursor, to);
    result.nextCursor = cursor;
  }
  return result;
}

// handle answers one client request (a promise for tools/call).
function handle(method, params) {
  switch (method) {
    case "initialize":
      clientCaps = params.capabilities ?? {};
      return {
        protocolVersion: versions.includes(params.protocolVersion) ? params.protocolVersion : versions[0],
        capabilities: { tools: {}, resources: {}, prompts: {} },
        serverInfo: { name: "mcp-fixture-node", version: "1.0.0" },
      };
    case "ping":
      return {};
    case "tools/list":
      return { tools };
    case "tools/call":
      return callTool(params);
    case "resources/list":
      return resourcesList(params);
    case "resources/read": {
      const note = notes.find((n) => n.uri === params.uri);
      if (!note) throw { code: -32002, message: "Resource not found", data: { uri: params.uri } };
      return { contents: [{ uri: note.uri, mimeType: "text/plain", text: `Note ${note.uri.slice(-1)} of ${notes.length}.` }] };
    }
    case "prompts/list":
      return { prompts: [{ name: "greet", description: "Greets someone.", arguments: [{ name: "name", required: true }] }] };
    case "prompts/get":
      if (params.name !== "greet") throw { code: -32602, message: `unknown prompt: ${params.name}` };
      if (!params.arguments?.name) throw { code: -32602, message: "prompt greet: argument name is required" };
      return { description: "greet", messages: [{ role: "user", content: { type: "text", text: `Say hello to ${params.arguments.name}.` } }] };
  }
  throw { code: -32601, message: `method not found: ${method}` };
}

function onLine(line) {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    log("not JSON:", err.message);
    send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: `parse error: ${err.message}` } });
    return;
  }
  if (msg.method === undefined) {
    const waiter = pending.get(msg.id);
    pending.delete(msg.id);
    if (!waiter) return log("answer to unknown request", msg.id);
    if (msg.error) waiter.reject(new Error(msg.error.message));
    else waiter.resolve(msg.result);
    return;
  }
  if (msg.id === undefined) {
    log("notification", msg.method);
    return;
  }
  const done = Promise.resolve()
    .then(() => handle(msg.method, msg.params ?? {}))
    .then(
      (result) => send({ jsonrpc: "2.0", id: msg.id, result }),
      (err) => send({ jsonrpc: "2.0", id: msg.id, error: err.code ? err : { code: -32603, message: String(err) } }),
    );
  running.add(done);
  done.finally(() => running.delete(done));
}

log("started");
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", onLine);
rl.on("close", async () => {
  closed = true;
  for (const waiter of pending.values()) waiter.reject(new Error("stdin closed"));
  pending.clear();
  await Promise.allSettled([...running]);
  log("stdin closed, bye"); // nothing is left to keep Node running: it exits 0
});

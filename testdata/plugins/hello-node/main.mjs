// hello-node: a deterministic Agentty fixture plugin (API 1) for tapedeck tests.
//
// Plain Node >= 18, no dependencies. It speaks JSON-RPC 2.0, one compact JSON
// object per line, on stdin/stdout, and behaves byte-for-byte like
// ../hello-python/main.py on stdout (stderr differs only in the "hello-node"
// prefix). Keep the two files in step: same messages, same key order, same
// stderr lines.
//
// Environment:
//   FIXTURE_LABEL=text      replaces "Hello" in the panel title.
//   FIXTURE_CRASH_AFTER=N   (N >= 1) exit with code 3 after handling N ui/event
//                           notifications.

const TAG = "hello-node";

const label = process.env.FIXTURE_LABEL !== undefined ? process.env.FIXTURE_LABEL : "Hello";
const crashAfter = parseCount(process.env.FIXTURE_CRASH_AFTER);

let nextId = 1; // ids of the plugin's own requests: 1, 2, 3, ...
const pending = new Map(); // request id -> method
let clicks = 0;
let name = null; // last "name" input value (string) or null
let uiEvents = 0;
let done = false;

function parseCount(s) {
  if (s === undefined || !/^[0-9]+$/.test(s)) return 0;
  return Number(s);
}

// ---- output ---------------------------------------------------------------

function writeLine(text) {
  process.stdout.write(text + "\n");
}

function log(text) {
  process.stderr.write(TAG + ": " + text + "\n");
}

function notify(method, params) {
  writeLine(JSON.stringify({ jsonrpc: "2.0", method, params }));
}

function request(method, params) {
  const id = nextId++;
  pending.set(id, method);
  writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
}

// rawId is the id exactly as the host wrote it (compacted JSON text).
function respond(rawId, result) {
  writeLine('{"jsonrpc":"2.0","id":' + rawId + ',"result":' + JSON.stringify(result) + "}");
}

function respondError(rawId, code, message) {
  writeLine('{"jsonrpc":"2.0","id":' + rawId + ',"error":' + JSON.stringify({ code, message }) + "}");
}

// ---- helpers shared in spirit with main.py ----------------------------------

// Property of a parsed JSON value, or undefined when it is not an object.
function get(v, key) {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  return Object.prototype.hasOwnProperty.call(v, key) ? v[key] : undefined;
}

// String(v) for parsed JSON values, without ever calling user-controlled
// toString/valueOf members.
function jsString(v) {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return v.map((e) => (e === null || e === undefined ? "" : jsString(e))).join(",");
  return "[object Object]";
}

const WS = " \t\r\n";

// Text of a JSON string token starting at s[i] (a '"'); returns end index.
function skipString(s, i) {
  i++;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\") i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return i;
}

function skipValue(s, i) {
  const c = s[i];
  if (c === '"') return skipString(s, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    while (i < s.length) {
      const d = s[i];
      if (d === '"') { i = skipString(s, i); continue; }
      if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") { depth--; if (depth === 0) return i + 1; }
      i++;
    }
    return i;
  }
  while (i < s.length && !",}] \t\r\n".includes(s[i])) i++;
  return i;
}

function skipWs(s, i) {
  while (i < s.length && WS.includes(s[i])) i++;
  return i;
}

// Removes insignificant whitespace from a valid JSON text.
function compact(s) {
  let out = "";
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '"') { const j = skipString(s, i); out += s.slice(i, j); i = j; continue; }
    if (!WS.includes(c)) out += c;
    i++;
  }
  return out;
}

// The raw (compacted) text of the last top-level member `key` of the JSON
// object text s, which has already been validated by JSON.parse.
function rawMember(s, key) {
  let found;
  let i = skipWs(s, 0) + 1; // past '{'
  for (;;) {
    i = skipWs(s, i);
    if (i >= s.length || s[i] === "}") break;
    const kEnd = skipString(s, i);
    const k = JSON.parse(s.slice(i, kEnd));
    i = skipWs(s, kEnd) + 1; // past ':'
    i = skipWs(s, i);
    const vEnd = skipValue(s, i);
    if (k === key) found = compact(s.slice(i, vEnd));
    i = skipWs(s, vEnd);
    if (s[i] === ",") i++;
  }
  return found;
}

// ---- behaviour ------------------------------------------------------------

function panelTree() {
  return {
    type: "column",
    gap: "medium",
    children: [
      { type: "text", text: label, style: "title" },
      { type: "text", text: "clicked " + clicks + " times", style: "muted" },
      { type: "input", id: "name", placeholder: "Your name" },
      { type: "button", id: "greet", label: "Greet", variant: "primary" },
      { type: "button", id: "ask", label: "Ask the agent" },
      {
        type: "list",
        id: "items",
        items: [
          { id: "a", title: "Alpha", tone: "info" },
          { id: "b", title: "Beta", subtitle: "second", tone: "success", actions: [{ id: "rm", label: "Remove" }] },
        ],
      },
      { type: "badge", text: "v1", tone: "neutral" },
    ],
  };
}

function setPanel() {
  request("ui/setPanel", { tree: panelTree() });
}

function handleRequest(msg, line) {
  const rawId = rawMember(line, "id");
  if (msg.method === "initialize") {
    respond(rawId, { sdkVersion: "fixture-1", apiVersion: 1 });
    log("initialized " + jsString(get(get(msg.params, "plugin"), "id")));
    return;
  }
  respondError(rawId, -32601, "unknown method " + msg.method);
}

function handleEvent(params) {
  const element = get(params, "element");
  const event = get(params, "event");
  if (element === "greet" && event === "click") {
    clicks++;
    setPanel();
    notify("ui/notify", { message: "Hello, " + (name !== null && name !== "" ? name : "world") + "!", kind: "success" });
  } else if (element === "name" && event === "change") {
    const value = get(params, "value");
    name = value === undefined || value === null ? null : jsString(value);
  } else if (element === "ask" && event === "click") {
    request("prompt/inject", { text: "Say hello", target: "ask" });
  } else if (element === "items" && event === "action") {
    log("action " + jsString(get(params, "action")) + " on " + jsString(get(params, "item")));
  }
}

function handleNotification(msg) {
  switch (msg.method) {
    case "panel/open":
      setPanel();
      break;
    case "ui/event":
      handleEvent(get(msg, "params"));
      uiEvents++;
      if (crashAfter > 0 && uiEvents >= crashAfter) {
        log("simulated crash after " + uiEvents + " ui/event messages");
        finish(3);
      }
      break;
    case "context/changed":
      notify("ui/setBadge", { text: "ctx" });
      break;
    case "shutdown":
      log("bye");
      finish(0);
      break;
    default:
      break; // unknown notifications are ignored
  }
}

function handleResponse(msg) {
  const id = msg.id;
  if (typeof id !== "number" || !pending.has(id)) return;
  const method = pending.get(id);
  pending.delete(id);
  if (method !== "prompt/inject") return;
  const error = get(msg, "error");
  if (error !== undefined && error !== null) {
    notify("ui/notify", { message: "prompt failed: " + jsString(get(error, "message")), kind: "error" });
  } else {
    notify("ui/notify", { message: "prompt " + jsString(get(get(msg, "result"), "status")), kind: "info" });
  }
}

function handleLine(line) {
  if (line.endsWith("\r")) line = line.slice(0, -1);
  if (/^[ \t\r]*$/.test(line)) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    log("ignoring non-JSON line");
    return;
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    log("ignoring non-object message");
    return;
  }
  const method = get(msg, "method");
  const id = get(msg, "id");
  const hasId = id !== undefined && id !== null;
  if (typeof method === "string") {
    if (hasId) handleRequest(msg, line);
    else handleNotification(msg);
  } else if (hasId) {
    handleResponse(msg);
  } else {
    log("ignoring message without method or id");
  }
}

// Ends the process once everything written so far has been flushed.
function finish(code) {
  if (done) return;
  done = true;
  process.exitCode = code;
  process.stdin.removeAllListeners("data");
  process.stdin.removeAllListeners("end");
  process.stdin.pause();
  process.stdin.destroy();
}

// ---- input: split on "\n" only (not on a lone "\r"), decode each line as UTF-8

let chunks = [];
process.stdin.on("data", (chunk) => {
  let start = 0;
  for (;;) {
    if (done) return;
    const nl = chunk.indexOf(10, start);
    if (nl < 0) break;
    chunks.push(chunk.subarray(start, nl));
    const line = Buffer.concat(chunks).toString("utf8");
    chunks = [];
    start = nl + 1;
    handleLine(line);
  }
  if (start < chunk.length) chunks.push(chunk.subarray(start));
});
process.stdin.on("end", () => {
  if (done) return;
  if (chunks.length > 0) {
    const line = Buffer.concat(chunks).toString("utf8");
    chunks = [];
    handleLine(line);
  }
  if (done) return;
  log("bye");
  finish(0);
});
process.stdin.on("error", () => {});
process.stdout.on("error", () => {
  // The reader went away: nothing more can be said.
  done = true;
  process.exit(0);
});

// widgets-node: a deterministic Agentty fixture plugin (API 1) with every
// interactive element of API 1, for the playground's tests. Plain Node >=
// 18, no dependencies, JSON-RPC 2.0, one compact JSON object per line.
//
// - initialize: answered at once; panel/open: ui/setPanel.
// - ui/event on any element: the panel is drawn again, saying the last
//   event ("last: q change hello"); "notify" sends two ui/notify at once
//   (the host drops the second); "ping" sends ui/notify "ping N at MS"
//   (MS: Date.now() as it writes) ten times, 50 ms apart; "ctx" asks
//   context/get; "ask" asks prompt/inject; "ws" asks workspace/list
//   (the manifest lacks workspace.read: the host refuses it); "bogus" asks
//   nope/method (unknown: -32601). Each answer is told in the panel.
// - command/execute widgets.hello: ui/notify; widgets.show: ui/showPanel.
// - context/changed: ui/setBadge "ctx"; url/open: the panel shows the path.
// - shutdown or stdin EOF: logs "bye" and exits 0.
// The plugin numbers its own requests 1, 2, 3, …

import { createInterface } from "node:readline";

const label = process.env.WIDGETS_LABEL ?? "Widgets";
let nextId = 1;
const pending = new Map();
const state = { last: "nothing yet", answer: "", q: "", size: "m", dark: false, items: ["a", "b"] };

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const log = (text) => process.stderr.write("widgets-node: " + text + "\n");
const notify = (method, params) => send({ jsonrpc: "2.0", method, params });

function request(method, params) {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve) => pending.set(id, resolve));
}

function tree() {
  return {
    type: "column",
    gap: "medium",
    children: [
      { type: "text", text: label, style: "title" },
      { type: "text", text: "last: " + state.last, style: "muted" },
      { type: "input", id: "q", placeholder: "Search", value: state.q },
      {
        type: "row",
        children: [
          { type: "button", id: "go", label: "Go", variant: "primary" },
          { type: "button", id: "notify", label: "Notify twice" },
          { type: "button", id: "ctx", label: "Context" },
          { type: "button", id: "ask", label: "Ask" },
          { type: "button", id: "ws", label: "Workspaces" },
          { type: "button", id: "bogus", label: "Bogus" },
          { type: "button", id: "ping", label: "Ping", variant: "ghost" },
        ],
      },
      {
        type: "list",
        id: "items",
        items: state.items.map((id) => ({ id, title: "Item " + id.toUpperCase(), actions: [{ id: "rm", label: "Remove" }] })),
        empty: "No items.",
      },
      { type: "choice", id: "size", options: [{ value: "s", label: "Small" }, { value: "m", label: "Medium" }, { value: "l", label: "Large" }], value: state.size },
      { type: "toggle", id: "dark", label: "Dark mode", value: state.dark },
      { type: "text", text: state.answer || "no answer yet", style: "code" },
      { type: "badge", text: state.dark ? "dark" : "light", tone: "info" },
    ],
  };
}

const draw = () => request("ui/setPanel", { tree: tree() });

async function ask(method, params) {
  const answer = await request(method, params);
  state.answer = method + ": " + JSON.stringify(answer.error ?? answer.result);
  log("answer " + state.answer);
  await draw();
}

async function onEvent(p) {
  state.last = [p.element, p.event, p.value, p.item, p.action].filter((x) => x !== undefined).map(String).join(" ");
  if (p.element === "q" && p.event === "change") state.q = String(p.value);
  if (p.element === "size") state.size = p.value;
  if (p.element === "dark") state.dark = p.value === true;
  if (p.element === "items" && p.event === "action") state.items = state.items.filter((x) => x !== p.item);
  switch (p.element) {
    case "notify":
      notify("ui/notify", { message: "first", kind: "info" });
      notify("ui/notify", { message: "second", kind: "warning" });
      break;
    case "ping":
      for (let n = 1; n <= 10; n++) {
        await new Promise((r) => setTimeout(r, 50));
        notify("ui/notify", { message: "ping " + n + " at " + Date.now(), kind: "info" });
      }
      break;
    case "ctx":
      return ask("context/get", {});
    case "ask":
      return ask("prompt/inject", { text: "Hello from widgets", target: "ask" });
    case "ws":
      return ask("workspace/list", {});
    case "bogus":
      return ask("nope/method", {});
  }
  await draw();
}

async function handle(msg) {
  if (msg.id !== undefined && msg.method === undefined) {
    const resolve = pending.get(msg.id);
    pending.delete(msg.id);
    resolve?.(msg);
    return;
  }
  const p = msg.params ?? {};
  switch (msg.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: msg.id, result: { sdkVersion: "widgets-1", apiVersion: 1 } });
      log("initialized " + (p.plugin && p.plugin.id));
      break;
    case "panel/open":
      await draw();
      break;
    case "panel/close":
      log("panel closed");
      break;
    case "ui/event":
      await onEvent(p);
      break;
    case "command/execute":
      if (p.command === "widgets.hello") notify("ui/notify", { message: "hello from a command", kind: "success" });
      if (p.command === "widgets.show") notify("ui/showPanel", {});
      break;
    case "context/changed":
      notify("ui/setBadge", { text: "ctx" });
      break;
    case "url/open":
      state.last = "url " + p.path;
      await draw();
      break;
    case "shutdown":
      log("bye");
      process.exit(0);
  }
}

// Messages are handled one after another, in order.
let queue = Promise.resolve();
createInterface({ input: process.stdin })
  .on("line", (line) => {
    if (line.trim() === "") return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      log("ignoring non-JSON line");
      return;
    }
    if (msg.id !== undefined && msg.method === undefined) {
      handle(msg); // answers are not queued: a handler awaits them
      return;
    }
    queue = queue.then(() => handle(msg));
  })
  .on("close", () => {
    log("bye");
    process.exit(0);
  });

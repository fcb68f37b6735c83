// elements-node: a deterministic Agentty fixture plugin (API 4) that draws
// every element type and field of API 1 to 4 and answers every event the
// host sends, for the playground's browser test and the report's. Plain
// Node >= 18, no dependencies, JSON-RPC 2.0, one compact JSON object a line.
//
// The tree is built the way plugins build it with the reference SDK: `ui`
// below makes the API 1 elements as the SDK's builders make them (their
// defaults included), and the API 4 elements with the SDK's signatures and
// the fields the host reads (docs/agentty-elements.md).
//
// - panel/open: ui/setPanel. Every ui/event is told in the panel
//   ("last: ELEMENT EVENT VALUE ITEM ACTION") and changes the state the way
//   a plugin would: a tab picked, a row selected, a step moved, …
// - "toast" sends ui/notify "saved"; "crash" writes a stack trace on
//   stderr and exits 3; "lock" is a toggle the plugin never turns on.
// - shutdown or stdin EOF: logs "bye" and exits 0.

import { createInterface } from "node:readline";

const compact = (children) => (children ?? []).flat().filter(Boolean);

// API 1, as the SDK builds them.
const ui = {
  column: (children, { gap = "medium" } = {}) => ({ type: "column", gap, children: compact(children) }),
  row: (children, { gap = "medium", wrap = false } = {}) => ({ type: "row", gap, wrap, children: compact(children) }),
  section: (title, children) => ({ type: "section", title, children: compact(children) }),
  text: (text, style = "body") => ({ type: "text", text: String(text ?? ""), style }),
  button: (id, label, { icon, variant = "secondary", disabled = false, menu } = {}) => ({ type: "button", id, label, icon, variant, disabled, menu }),
  input: (id, { placeholder = "", value = "", rows, mono, completions, language } = {}) => ({ type: "input", id, placeholder, value, ...(rows ? { rows } : {}), mono, completions, language }),
  list: (id, items, { empty } = {}) => ({ type: "list", id, items, empty }),
  choice: (id, options, value = "") => ({ type: "choice", id, options, value }),
  toggle: (id, label, value = false) => ({ type: "toggle", id, label, value }),
  badge: (text, tone = "neutral") => ({ type: "badge", text, tone }),
  spinner: (text = "") => ({ type: "spinner", text }),
  divider: () => ({ type: "divider" }),
  // API 4.
  card: (children, { title, subtitle, icon, tone, id, closable } = {}) => ({ type: "card", title, subtitle, icon, tone, id, closable, children: compact(children) }),
  grid: (children, { columns, gap, widths, id, align, resizable, fill } = {}) => ({ type: "grid", columns, gap, widths, id, align, resizable, fill, children: compact(children) }),
  tabs: (id, tabs, value, children, { fill, addMenu } = {}) => ({ type: "tabs", id, tabs, value, children: compact(children), fill, addMenu }),
  table: (id, columns, rows, { empty, selected } = {}) => ({ type: "table", id, columns, rows, empty, selected }),
  keyValue: (items) => ({ type: "keyValue", items }),
  stat: (label, value, { detail, icon, tone } = {}) => ({ type: "stat", label, value, detail, icon, tone }),
  progress: (value, { label, detail, tone } = {}) => ({ type: "progress", value, label, detail, tone }),
  callout: (text, { title, icon, tone } = {}) => ({ type: "callout", text, title, icon, tone }),
  select: (id, options, value, { placeholder, disabled } = {}) => ({ type: "select", id, options, value, placeholder, disabled }),
  checkbox: (id, label, value, { description, disabled } = {}) => ({ type: "checkbox", id, label, value, description, disabled }),
  code: (text, { language, title } = {}) => ({ type: "code", text, language, title }),
  flow: (id, steps, { reorderable, insertMenu } = {}) => ({ type: "flow", id, steps, reorderable, insertMenu }),
  popover: (id, title, children) => ({ type: "popover", id, title, children: compact(children) }),
};

let nextId = 1;
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const log = (text) => process.stderr.write("elements-node: " + text + "\n");
const request = (method, params) => send({ jsonrpc: "2.0", id: nextId++, method, params });

const state = {
  last: "nothing yet",
  query: "",
  tab: "inputs",
  tabs: [
    { id: "inputs", label: "Inputs", icon: "pencil" },
    { id: "data", label: "Data", badge: "3" },
    { id: "flow", label: "Flow", icon: "workflow", closable: true },
  ],
  region: "seoul",
  agree: false,
  dark: false,
  lock: false,
  plan: "pro",
  row: "build",
  item: "a",
  steps: [
    { id: "collect", title: "Collect issues", subtitle: "12 found", icon: "search", state: "done" },
    { id: "triage", title: "Triage", subtitle: "working…", icon: "bot", state: "active" },
    { id: "post", title: "Post a summary", icon: "send", state: "on" },
    { id: "archive", title: "Archive", state: "off", side: true },
  ],
  step: "triage",
  width: 200,
  tip: true,
  popover: false,
  made: 0,
};

function inputsTab() {
  return [
    ui.section("Fields", [
      ui.row([ui.input("q", { placeholder: "Search the store", value: "" }), ui.button("go", "Go", { variant: "primary", icon: "search" })]),
      ui.input("body", { placeholder: "Request body", rows: 3, mono: true, language: "json", completions: [{ label: "baseUrl", insert: "{{baseUrl}}", detail: "https://api.example.com" }, { label: "token", detail: "secret" }] }),
      ui.text("query: " + (state.query || "(none)"), "muted"),
    ]),
    ui.section("Buttons", [
      ui.row([
        ui.button("save", "Save", { variant: "primary", icon: "save" }),
        ui.button("more", "More", { menu: [{ value: "dup", label: "Duplicate" }, { value: "del", label: "Delete" }] }),
        ui.button("trash", "", { icon: "trash-2", variant: "danger" }),
        ui.button("ghost", "Cancel", { variant: "ghost" }),
        ui.button("off", "Disabled", { disabled: true }),
      ], { gap: "small", wrap: true }),
      ui.row([ui.button("toast", "Toast", { icon: "bell" }), ui.button("settings", "Settings", { icon: "settings" }), ui.button("crash", "Crash", { variant: "danger", icon: "bug" })], { gap: "small" }),
    ]),
    ui.section("Choices", [
      ui.select("region", [{ value: "seoul", label: "Seoul (ap-northeast-2)" }, { value: "tokyo", label: "Tokyo (ap-northeast-1)" }, { value: "virginia", label: "N. Virginia (us-east-1)" }], state.region, { placeholder: "Pick a region" }),
      ui.select("frozen", [{ value: "a", label: "A" }], "", { placeholder: "Disabled select", disabled: true }),
      ui.choice("plan", [{ value: "free", label: "Free" }, { value: "pro", label: "Pro" }, { value: "team", label: "Team" }], state.plan),
      ui.checkbox("agree", "Open a pull request when done", state.agree, { description: "The agent pushes its branch and opens a draft PR." }),
      ui.checkbox("never", "Disabled checkbox", false, { disabled: true }),
      ui.toggle("dark", "Dark mode", state.dark),
      ui.toggle("lock", "Locked (the plugin keeps it off)", state.lock),
    ]),
  ];
}

function dataTab() {
  return [
    ui.grid([
      ui.stat("Passed", "128", { detail: "+4 since yesterday", tone: "success", icon: "circle-check" }),
      ui.stat("Failed", "2", { detail: "1 new", tone: "error", icon: "circle-x" }),
      ui.stat("Open PRs", "7", { icon: "git-pull-request" }),
    ], { columns: 3, gap: "small" }),
    ui.table("runs", [{ label: "Job", grow: 3 }, { label: "Branch", grow: 2, align: "center" }, { label: "Time", align: "end" }], [
      { id: "build", cells: ["build", "main", "1m 12s"], tone: "success" },
      { id: "test", cells: ["test", "main", "3m 40s"], tone: "error" },
      { id: "deploy", cells: ["deploy", "release", "—"] },
    ], { selected: state.row, empty: "No runs yet" }),
    ui.table("none", [{ label: "Empty" }], [], { empty: "No runs yet" }),
    ui.card([
      ui.keyValue([
        { label: "Status", value: "Running", tone: "success" },
        { label: "Commit", value: "ebfe735", mono: true },
        { label: "Started", value: "Today, 14:02" },
      ]),
      ui.progress(0.42, { label: "Uploading build" }),
      ui.progress(1, { label: "Tests", detail: "128 / 128", tone: "success" }),
    ], { title: "Release check", subtitle: "main · 2 min ago", icon: "rocket", tone: "info" }),
    state.tip && ui.card([ui.text("Close this tip when you have read it.", "muted")], { title: "A tip", icon: "lightbulb", id: "tip", closable: true }),
    ui.callout("Agents can read this folder. Nothing leaves your computer.", { title: "Local only" }),
    ui.callout("Your token expires in 3 days.", { tone: "warning" }),
    ui.callout("Could not reach api.example.com.", { title: "Sync failed", tone: "error", icon: "cloud" }),
    ui.code('{\n  "name": "my-plugin",\n  "apiVersion": 4\n}', { language: "json", title: "agentty-plugin.json" }),
    ui.code("$ npm test", { language: "sh" }),
    ui.row([ui.badge("draft"), ui.badge("info", "info"), ui.badge("merged", "success"), ui.badge("stale", "warning"), ui.badge("failed", "error")], { gap: "small", wrap: true }),
    ui.spinner("Waiting for the agent…"),
    ui.list("tasks", [
      { id: "a", title: "Fix the login timeout", subtitle: "auth · Claude Code", detail: "2 min ago", icon: "circle-check", tone: "success", selected: state.item === "a", actions: [{ id: "open", icon: "external-link", tooltip: "Open" }, { id: "remove", icon: "trash-2", tooltip: "Remove" }] },
      { id: "b", title: "GET /users", tag: "GET", tagTone: "info", depth: 1, selected: state.item === "b", actions: [{ id: "a1", label: "One" }, { id: "a2", label: "Two" }, { id: "a3", label: "Three" }, { id: "a4", label: "Four", icon: "copy" }, { id: "a5", tooltip: "Five" }] },
      { id: "c", title: "Unknown icon", icon: "not-an-icon", depth: 2, tag: "POST", tagTone: "warning" },
    ], { empty: "No tasks yet." }),
    ui.list("empty", [], { empty: "Nothing here yet." }),
  ];
}

function flowTab() {
  return [
    ui.grid([
      ui.flow("steps", state.steps.map((s) => ({ ...s, selected: s.id === state.step })), {
        reorderable: true,
        insertMenu: [{ value: "http", label: "HTTP request" }, { value: "wait", label: "Wait" }],
      }),
      ui.column([ui.text("Step: " + state.step, "title"), ui.text("width: " + state.width, "small")]),
    ], { widths: [state.width + "px", "1"], id: "split", resizable: true, align: "center" }),
  ];
}

function tree() {
  const body = state.tab === "data" ? dataTab() : state.tab === "flow" ? flowTab() : inputsTab();
  return ui.column([
    ui.row([ui.text("Elements", "title"), ui.badge("API 4", "info")], { gap: "small" }),
    ui.text("last: " + state.last, "muted"),
    ui.tabs("tabs", state.tabs, state.tab, body, { addMenu: [{ value: "notes", label: "Notes" }, { value: "logs", label: "Logs" }] }),
    state.popover && ui.popover("prefs", "Settings", [ui.text("Popover content", "muted"), ui.toggle("pop.toggle", "Inside the popover", false)]),
    ui.divider(),
  ]);
}

const draw = () => request("ui/setPanel", { tree: tree() });

function onEvent(p) {
  state.last = [p.element, p.event, p.value, p.item, p.action].filter((x) => x !== undefined).map(String).join(" ");
  const { element: el, event: ev } = p;
  if (el === "tabs" && ev === "change") state.tab = p.value;
  if (el === "tabs" && ev === "close") {
    state.tabs = state.tabs.filter((t) => t.id !== p.value);
    if (state.tab === p.value) state.tab = "inputs";
  }
  if (el === "tabs" && ev === "add") {
    state.made++;
    state.tabs.push({ id: p.value + state.made, label: p.value + " " + state.made, closable: true });
  }
  if (el === "q" && ev === "submit") state.query = String(p.value);
  if (el === "region") state.region = p.value;
  if (el === "plan") state.plan = p.value;
  if (el === "agree") state.agree = p.value === true;
  if (el === "dark") state.dark = p.value === true;
  if (el === "runs") state.row = p.item;
  if (el === "tasks" && ev === "select") state.item = p.item;
  if (el === "steps" && ev === "select") state.step = p.item;
  if (el === "steps" && ev === "move") {
    const from = state.steps.findIndex((s) => s.id === p.item);
    const [moved] = state.steps.splice(from, 1);
    state.steps.splice(state.steps.findIndex((s) => s.id === p.value), 0, moved);
  }
  if (el === "steps" && ev === "insert") {
    state.made++;
    const at = state.steps.findIndex((s) => s.id === p.item) + 1;
    state.steps.splice(at, 0, { id: p.value + state.made, title: p.value + " " + state.made, icon: "globe" });
  }
  if (el === "split" && ev === "resize") state.width = p.value;
  if (el === "tip" && ev === "close") state.tip = false;
  if (el === "settings") state.popover = true;
  if (el === "prefs" && ev === "close") state.popover = false;
  if (el === "toast") send({ jsonrpc: "2.0", method: "ui/notify", params: { message: "saved", kind: "success" } });
  if (el === "crash") {
    const err = new Error("the fixture was told to crash");
    process.stderr.write(err.stack.split("\n").slice(0, 3).join("\n") + "\n    at crash (main.mjs)\n");
    log("exiting with 3");
    process.exit(3);
  }
  draw();
}

function handle(msg) {
  if (msg.id !== undefined && msg.method === undefined) return;
  const p = msg.params ?? {};
  switch (msg.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: msg.id, result: { sdkVersion: "elements-1", apiVersion: 4 } });
      log("initialized " + (p.plugin && p.plugin.id));
      break;
    case "panel/open":
      draw();
      break;
    case "ui/event":
      onEvent(p);
      break;
    case "shutdown":
      log("bye");
      process.exit(0);
  }
}

createInterface({ input: process.stdin })
  .on("line", (line) => {
    if (line.trim() === "") return;
    try {
      handle(JSON.parse(line));
    } catch (e) {
      log("ignoring a line: " + e.message);
    }
  })
  .on("close", () => {
    log("bye");
    process.exit(0);
  });

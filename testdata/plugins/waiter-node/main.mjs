// waiter-node: an Agentty fixture plugin (API 1) that waits the way real
// Node plugins do, for tapedeck's replay tests. Plain Node >= 18, no
// dependencies; ../waiter-python/main.py behaves the same on stdout.
//
// - initialize is answered at once; activation then reads the manifest
//   (asynchronous file I/O), and later messages wait for it, as in the
//   reference SDK;
// - the search input is debounced: ui/setPanel with the results goes out
//   350 ms after the last change, and the query is committed only then;
// - the "run" button starts a child process that takes 700 ms and reports
//   the committed query when it ends;
// - command/execute "ask" sleeps 1.2 s, then asks the host (prompt/inject)
//   about the last build, and reports the answer.
// Every step logs a line on stderr. Pending work does not hold up shutdown:
// on shutdown or stdin EOF it exits at once, as the reference SDK does.
//
// Environment (for tests): WAITER_LABEL replaces "results for";
// WAITER_EXTRA=1 sends one more notification (ui/setBadge) after a build.

import { readFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const label = process.env.WAITER_LABEL ?? "results for";
const extra = process.env.WAITER_EXTRA === "1";

let nextId = 1;
const pending = new Map(); // our request id -> resolve
let debounce = null;
let query = ""; // committed by the debounce
let lastBuild = "none";

const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
const log = (text) => process.stderr.write("waiter-node: " + text + "\n");
const notify = (method, params) => send({ jsonrpc: "2.0", method, params });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function request(method, params) {
  const id = nextId++;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve) => pending.set(id, resolve));
}

function panel(children) {
  return request("ui/setPanel", { tree: { type: "column", children } });
}

function search(value) {
  clearTimeout(debounce);
  debounce = setTimeout(() => {
    query = value;
    log("search " + value);
    panel([
      { type: "input", id: "q", value },
      { type: "text", text: label + " " + value },
      { type: "button", id: "run", label: "Run" },
    ]);
  }, 350);
}

function build() {
  const q = query;
  log("build started for " + q);
  const child = spawn(process.execPath, ["-e", "setTimeout(() => console.log('built'), 700)"]);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.on("close", (code) => {
    lastBuild = q + ": " + out.trim() + " (exit " + code + ")";
    log("build done");
    notify("ui/notify", { message: "build " + lastBuild, kind: "success" });
    if (extra) notify("ui/setBadge", { text: "new" });
  });
}

async function ask() {
  log("thinking");
  await sleep(1200);
  const answer = await request("prompt/inject", { text: "Explain the build of " + lastBuild });
  log("asked");
  notify("ui/notify", { message: "prompt " + (answer.result?.status ?? "failed"), kind: "info" });
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
    case "initialize": {
      send({ jsonrpc: "2.0", id: msg.id, result: { sdkVersion: "waiter-1", apiVersion: 1 } });
      const manifest = JSON.parse(await readFile(new URL("./agentty-plugin.json", import.meta.url), "utf8"));
      log("activated " + manifest.id);
      break;
    }
    case "panel/open":
      panel([{ type: "input", id: "q", placeholder: "Search" }, { type: "button", id: "run", label: "Run" }]);
      break;
    case "ui/event":
      if (p.element === "q" && p.event === "change") search(String(p.value));
      if (p.element === "run" && p.event === "click") build();
      break;
    case "command/execute":
      if (p.command === "ask") ask();
      break;
    case "shutdown":
      log("bye");
      process.exit(0);
  }
}

// Messages are handled one after another: a handler that awaits (activation)
// holds up the ones behind it; long work (timers, builds) runs beside.
let queue = Promise.resolve();

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    log("ignoring non-JSON line");
    return;
  }
  queue = queue.then(() => handle(msg));
}).on("close", () => {
  log("bye");
  process.exit(0);
});

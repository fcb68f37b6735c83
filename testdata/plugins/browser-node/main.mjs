// browser-node: a deterministic Agentty fixture plugin (API 3) that drives
// the in-app browser the way the SDK's X Feed Reader example does, for the
// check tests: plain Node >= 18, no dependencies, JSON-RPC 2.0, one compact
// JSON object per line on stdin/stdout.
//
// - initialize: answered at once with {"sdkVersion":"fixture-1","apiVersion":3}.
// - panel/open: browser/sites, then ui/setPanel with a badge per site.
// - ui/event read/click: browser/open (https://x.com/tapedeck, background),
//   browser/wait, browser/eval reading the posts, browser/eval scrolling,
//   browser/close, then ui/setPanel with the posts. An error answer at any
//   step ends the read: the tab (if one was opened) is closed and the panel
//   says "Failed: <message>".
// - shutdown or stdin EOF: logs "bye" and exits 0.
// Every step logs a line on stderr. The plugin numbers its own requests
// 1, 2, 3, … The host's side of a session is host.jsonl beside this file.

const TAG = "browser-node";
const PROFILE = "https://x.com/tapedeck";

// Runs inside the page, as the body of a function of args (the host wraps it).
const READ_POSTS = `return (function readPosts(args) {
  const posts = [];
  for (const article of document.querySelectorAll('article[data-testid="tweet"]')) {
    const link = article.querySelector('a[href*="/status/"]');
    const id = link ? (link.getAttribute('href').match(/status\\/(\\d+)/) || [])[1] : null;
    if (!id || args.seen.includes(id)) continue;
    const text = article.querySelector('[data-testid="tweetText"]');
    posts.push({ id, text: text ? text.innerText.trim() : '' });
  }
  return { posts, url: location.href, signInWall: !!document.querySelector('[data-testid="loginButton"]') };
})(args);`;
const SCROLL = "window.scrollBy({ top: window.innerHeight * 0.6 }); return window.scrollY;";

let nextId = 1;
const pending = new Map(); // request id -> { resolve, reject }
let done = false;
const state = { sites: [], posts: [], status: "Idle.", busy: false };

function writeLine(text) {
  process.stdout.write(text + "\n");
}

function log(text) {
  process.stderr.write(TAG + ": " + text + "\n");
}

function call(method, params) {
  const id = nextId++;
  writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function panel() {
  const children = [{ type: "text", text: "X Feed", style: "title" }];
  for (const site of state.sites) {
    children.push({
      type: "badge",
      text: site.host + (site.signedIn ? ": signed in" : ": not signed in"),
      tone: site.signedIn ? "success" : "warning",
    });
  }
  children.push({ type: "button", id: "read", label: "Read posts", variant: "primary", disabled: state.busy });
  children.push({ type: "text", text: state.status, style: "muted" });
  children.push({
    type: "list",
    id: "posts",
    items: state.posts.map((p) => ({ id: "p" + p.id, title: p.text || "(no text)" })),
    empty: "No posts read yet.",
  });
  return call("ui/setPanel", { tree: { type: "column", gap: "medium", children } });
}

async function openPanel() {
  try {
    const sites = await call("browser/sites", {});
    state.sites = Array.isArray(sites) ? sites : [];
    log("sites " + state.sites.map((s) => s.host).join(","));
  } catch (err) {
    state.status = "Could not read the sign-in: " + err.message;
    log(state.status);
  }
  await panel();
}

async function read() {
  if (state.busy) return;
  state.busy = true;
  let tabId = null;
  try {
    ({ tabId } = await call("browser/open", { url: PROFILE, mode: "background" }));
    log("opened tab " + tabId);
    await call("browser/wait", { tabId, timeoutMs: 30000 });
    const page = await call("browser/eval", { tabId, script: READ_POSTS, args: { seen: [] }, timeoutMs: 20000 });
    state.posts = page && page.value && Array.isArray(page.value.posts) ? page.value.posts : [];
    log("read " + state.posts.length + " posts");
    await call("browser/eval", { tabId, script: SCROLL });
    const closing = tabId;
    tabId = null;
    await call("browser/close", { tabId: closing });
    state.status = "Done: " + state.posts.length + " post(s).";
  } catch (err) {
    state.status = "Failed: " + err.message;
    log(state.status);
    if (tabId !== null) await call("browser/close", { tabId }).catch(() => {});
  } finally {
    state.busy = false;
  }
  await panel();
}

function handleLine(line) {
  if (line.endsWith("\r")) line = line.slice(0, -1);
  if (line.trim() === "") return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    log("ignoring non-JSON line");
    return;
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return;
  const hasId = msg.id !== undefined && msg.id !== null;
  if (typeof msg.method === "string") {
    const params = msg.params && typeof msg.params === "object" ? msg.params : {};
    if (hasId) {
      if (msg.method === "initialize") {
        writeLine(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { sdkVersion: "fixture-1", apiVersion: 3 } }));
        log("initialized " + String(params.plugin && params.plugin.id));
      } else {
        writeLine(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "unknown method " + msg.method } }));
      }
      return;
    }
    switch (msg.method) {
      case "panel/open":
        openPanel().catch((err) => log(String(err)));
        break;
      case "ui/event":
        if (params.element === "read" && params.event === "click") read().catch((err) => log(String(err)));
        break;
      case "browser/hidden":
        log("tab " + params.tabId + " hidden");
        break;
      case "shutdown":
        finish();
        break;
      default:
        break;
    }
    return;
  }
  if (hasId && pending.has(msg.id)) {
    const { resolve, reject } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) {
      const err = new Error(String(msg.error.message));
      err.code = msg.error.code;
      reject(err);
    } else {
      resolve(msg.result);
    }
  }
}

function finish() {
  if (done) return;
  done = true;
  log("bye");
  process.stdin.removeAllListeners("data");
  process.stdin.destroy();
  process.exitCode = 0;
}

let buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let nl;
  while (!done && (nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    handleLine(line);
  }
});
process.stdin.on("end", () => {
  if (!done && buffered !== "") handleLine(buffered);
  finish();
});
process.stdout.on("error", () => process.exit(0));

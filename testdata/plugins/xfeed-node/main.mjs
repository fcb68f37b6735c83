// xfeed-node: an Agentty fixture plugin (API 1) that behaves as the X Feed
// plugin does, for tapedeck's data-folder tests: it keeps its feed in the
// data folder the host gives it and reads, changes and writes it back
// with a wait between (as a fetch would), so that two runs sharing the
// folder lose each other's writes. Plain Node >= 18, on the vendored SDK
// of ../clock-node (sdk/).
//
// - initialize: the data folder is params.plugin.dataDir (else
//   AGENTTY_PLUGIN_DATA).
// - panel/open draws feed.json of the data folder (made with one post
//   when it is missing): "N posts", each post "TEXT · posted this minute"
//   or "posted N minutes ago" with its likes, a row action "like", and
//   the button "post".
// - ui/event: "post" click reads feed.json, waits 30 ms, adds a post with
//   a random id (Math.random) and Date.now(), writes it back and draws
//   the feed; "feed" action "like" on a post does the same with one more
//   like.
// Every step logs a line on stderr; shutdown or stdin EOF ends it at once.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { plugin } from "../clock-node/sdk/index.mjs";

let dataDir = process.env.AGENTTY_PLUGIN_DATA || "";
const file = () => join(dataDir, "feed.json");

function read() {
  if (!existsSync(file())) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file(), JSON.stringify({ posts: [{ id: "first", text: "hello, feed", at: Date.now(), likes: 0 }] }));
  }
  return JSON.parse(readFileSync(file(), "utf8"));
}

const ago = (ms) => {
  const min = Math.floor(ms / 60000);
  if (min < 1) return "posted this minute";
  return min === 1 ? "posted 1 minute ago" : "posted " + min + " minutes ago";
};

async function draw(api, feed) {
  const now = Date.now();
  await api.request("ui/setPanel", {
    tree: {
      type: "column",
      children: [
        { type: "text", text: feed.posts.length + " posts", style: "title" },
        {
          type: "list",
          id: "feed",
          items: feed.posts.map((p) => ({ id: p.id, title: p.text, subtitle: ago(now - p.at) + " · " + p.likes + " likes", actions: [{ id: "like", label: "Like" }] })),
        },
        { type: "button", id: "post", label: "Post" },
      ],
    },
  });
}

plugin("xfeed-node", {
  async initialize(params, api) {
    dataDir = params.plugin?.dataDir || dataDir;
    api.log("initialized " + (params.plugin?.id ?? "?"));
  },
  async "panel/open"(params, api) {
    await draw(api, read());
  },
  async "ui/event"(params, api) {
    const feed = read();
    await sleep(30); // as a fetch would: another writer may come between
    if (params.element === "post") {
      const id = Math.floor(Math.random() * 1e9).toString(36);
      feed.posts.unshift({ id, text: "post " + id, at: Date.now(), likes: 0 });
    } else if (params.element === "feed" && params.action === "like") {
      const p = feed.posts.find((p) => p.id === params.item);
      if (p) p.likes++;
    } else return;
    writeFileSync(file(), JSON.stringify(feed));
    api.log("wrote feed.json: " + feed.posts.length + " posts");
    await draw(api, feed);
  },
});

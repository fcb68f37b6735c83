// gallery-node: an Agentty fixture plugin (API 4) that behaves as the UI
// Gallery plugin does, for tapedeck's Keep-it tests: tabs, a table, a
// select of recipes and a checkbox, and favourites kept in its data
// folder with a random id and the time they were saved. Plain Node >= 18,
// on the vendored SDK of ../clock-node (sdk/).
//
// - initialize: the data folder is params.plugin.dataDir (else
//   AGENTTY_PLUGIN_DATA).
// - panel/open draws the tabs "layout", "data" and "recipes" (the one
//   picked, "layout" first): layout a row of two texts; data a table of
//   three rows ("selected" the row picked); recipes a select of recipes,
//   a checkbox "vegetarian", the button "save" and the favourites of
//   favourites.json in the data folder, each "RECIPE · saved this minute"
//   or "saved N minutes ago".
// - ui/event: "tabs" change picks a tab; "table" select picks a row;
//   "recipe" change picks a recipe; "veg" change sets the checkbox (the
//   recipes then only the vegetarian ones); "save" click adds the recipe
//   to favourites.json with a random id (Math.random) and the ISO time,
//   and says "saved RECIPE at ISO" in a toast. Each redraws the panel.
// Every step logs a line on stderr; shutdown or stdin EOF ends it at once.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { plugin } from "../clock-node/sdk/index.mjs";

let dataDir = process.env.AGENTTY_PLUGIN_DATA || "";
const state = { tab: "layout", row: "", recipe: "", veg: false };
const recipes = [
  { value: "dal", label: "Dal", veg: true },
  { value: "ramen", label: "Ramen", veg: false },
  { value: "salad", label: "Salad", veg: true },
];
const favFile = () => join(dataDir, "favourites.json");
const favourites = () => (existsSync(favFile()) ? JSON.parse(readFileSync(favFile(), "utf8")) : []);
const ago = (ms) => {
  const min = Math.floor(ms / 60000);
  if (min < 1) return "saved this minute";
  return min === 1 ? "saved 1 minute ago" : "saved " + min + " minutes ago";
};

function content() {
  switch (state.tab) {
    case "data":
      return {
        type: "table",
        id: "table",
        columns: [{ label: "Name" }, { label: "Size", align: "end" }],
        rows: [
          { id: "a", cells: ["alpha", "1"] },
          { id: "b", cells: ["beta", "22"], tone: "success" },
          { id: "c", cells: ["gamma", "333"] },
        ],
        selected: state.row || undefined,
      };
    case "recipes": {
      const now = Date.now();
      const shown = recipes.filter((r) => !state.veg || r.veg);
      return {
        type: "column",
        children: [
          { type: "select", id: "recipe", options: shown.map((r) => ({ value: r.value, label: r.label })), value: state.recipe || undefined, placeholder: "Pick a recipe" },
          { type: "checkbox", id: "veg", label: "vegetarian", value: state.veg },
          { type: "button", id: "save", label: "Save favourite", disabled: !state.recipe },
          { type: "list", id: "favs", items: favourites().map((f) => ({ id: f.id, title: f.recipe, subtitle: ago(now - Date.parse(f.at)) })) },
        ],
      };
    }
  }
  return { type: "row", children: [{ type: "text", text: "left" }, { type: "text", text: "right" }] };
}

async function draw(api) {
  await api.request("ui/setPanel", {
    tree: {
      type: "column",
      children: [
        { type: "text", text: "UI Gallery", style: "title" },
        {
          type: "tabs",
          id: "tabs",
          value: state.tab,
          tabs: [
            { id: "layout", label: "Layout" },
            { id: "data", label: "Data" },
            { id: "recipes", label: "Recipes" },
          ],
          children: [content()],
        },
      ],
    },
  });
}

plugin("gallery-node", {
  async initialize(params, api) {
    dataDir = params.plugin?.dataDir || dataDir;
    api.log("initialized " + (params.plugin?.id ?? "?"));
  },
  async "panel/open"(params, api) {
    await draw(api);
  },
  async "ui/event"(params, api) {
    const { element, event, value, item } = params;
    if (element === "tabs" && event === "change") state.tab = String(value);
    else if (element === "table" && event === "select") state.row = String(item);
    else if (element === "recipe" && event === "change") state.recipe = String(value);
    else if (element === "veg" && event === "change") {
      state.veg = value === true;
      if (state.veg && !recipes.find((r) => r.value === state.recipe)?.veg) state.recipe = "";
    } else if (element === "save" && event === "click" && state.recipe) {
      const at = new Date().toISOString();
      const fav = { id: Math.floor(Math.random() * 1e9).toString(36), recipe: state.recipe, at };
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(favFile(), JSON.stringify([...favourites(), fav]));
      api.log("saved " + fav.id);
      api.notify("ui/notify", { message: "saved " + state.recipe + " at " + at, kind: "success" });
    } else return;
    await draw(api);
  },
});

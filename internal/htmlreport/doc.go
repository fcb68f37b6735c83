// Package htmlreport owns tapedeck's HTML reports: one self-contained page per
// session or replay (inline CSS and JS, nothing loaded from the network) that
// draws the timeline as two lanes, every ui/setPanel tree as the panel the
// user saw, check findings on their frames, and for a replay each difference
// side by side. Frame content enters the page only as JSON data inside a
// script element that it cannot close, and the page's script renders it with
// DOM text APIs, never as markup.
//
// It reads frames, messages and diff results; it knows nothing of the store,
// of processes or of the command line.
package htmlreport

// assets/icons.js, the Lucide icons the Agentty host draws, is generated
// from the lucide-static package pinned in icons/package.json (see
// icons/gen.mjs); run this after changing the version or the list.
//go:generate sh -c "cd icons && npm ci --ignore-scripts --no-audit --no-fund && node gen.mjs"

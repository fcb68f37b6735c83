// Package playground owns tapedeck play: a front-end on the recording use
// case in which a browser page is the host. The plugin runs under
// capture.Run (a normal stored session, with the same capture
// guarantees); the playground holds the host's end of its streams, and a
// page served by net/http on 127.0.0.1 (a free port; a random token in the
// URL, which the page moves into the tab's session storage and --open
// never puts on a command line; the Host and Origin of every request
// checked before its body is read; heads, bodies and times bounded, and
// connections that have not shown the token capped; the assets embedded)
// draws the panel with the report's renderer and timeline
// (htmlreport.Script), live, from a bounded window of each run (its
// first frames, each line capped as replay caps it: bounded.go; the store
// has them all). The plugin runs in a process group of its own, ended
// with what it left behind at every restart and at the end.
// What the person does in the page becomes the exact frames the host
// sends (ui/event with the context, panel/open and close, context/changed,
// command/execute, url/open, shutdown); the plugin's own requests get the
// host's answers (editable in the page), refused as the host refuses them:
// package check decides, by the manifest, what the host would reject
// (-32001, -32601, -32602, the 700 ms rules). The plugin runs with its
// clock pinned and its random numbers seeded (Options.PinClock), with a
// data folder of the playground's own and, for each variable of
// Options.FreshDirs, a copy of the folder it names; what each run starts
// from in them is copied as it starts (startdata.go). Keeping a session
// writes a host script whose lines wait for what the plugin had said
// (HostScript), the golden tape, and what the session started from
// (NAME.data, package datafolder) into the plugin's tapes folder (never
// through a link out of the plugin folder, and over a kept session only
// when the page asked the person), replays the tape, and says on the
// terminal what it kept; a replay that differs is explained in words
// (explain.go). In a folder tapedeck wrap wrapped, the plugin's own
// command runs (the original manifest wrap keeps), never the launcher.
// With Watch, a change to the plugin's files (heard by inotify where the
// system has it; not the plugin's own writes: watchfiles.go) restarts it
// from what the run it replaces started from, plays the actions so far
// again and shows the comparison, in the page and on the terminal.
//
// It knows nothing of the command line: cli's play command fills Options
// and calls Run.
package playground

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
// (htmlreport.Script), live.
// What the person does in the page becomes the exact frames the host
// sends (ui/event with the context, panel/open and close, context/changed,
// command/execute, url/open, shutdown); the plugin's own requests get the
// host's answers (editable in the page), refused as the host refuses them:
// package check decides, by the manifest, what the host would reject
// (-32001, -32601, -32602, the 700 ms rules). Keeping a session writes a
// host script whose lines wait for what the plugin had said (HostScript)
// and the golden tape into the plugin's tapes folder. With Watch, a
// change to the plugin's files restarts it, plays the actions so far
// again and shows the comparison.
//
// It knows nothing of the command line: cli's play command fills Options
// and calls Run.
package playground

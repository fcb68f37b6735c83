// Package check owns the rules of each host profile: given a session's
// frames in order, it reports what the host would reject, drop or punish,
// or what the protocol's specification forbids, each finding tied to the
// frame that caused it and citing the section of the specification it
// comes from. A Checker applies one profile's rule set (Options.Profile,
// or the one the session's first frames name, as the store finds it):
//
//   - Agentty's (protocol/plugin-protocol-v1.md, protocol/host-behaviour.md):
//     the host's methods, permissions, UI trees, rates, line and shutdown
//     limits. Message and UI-tree shapes are JSON Schema files (schemas/,
//     embedded), one per plugin→host method, annotated with the API
//     version that brought the method (x-since), the permission it needs
//     (x-permission), the manifest section it acts on (x-section:
//     browser/* and the sites of the manifest's browser section) and the
//     rule a broken constraint belongs to (x-rule, x-rules); the UI tree is
//     gated by API version by loading ui-tree.N.json as the tree. Counting,
//     rate, id, site and lifecycle rules are code, and so are the host's
//     answers that are its circumstance rather than the plugin's fault (the
//     in-app browser unavailable: an info).
//   - JSON-RPC 2.0's (the JSONRPC profile's whole set, and the ground of
//     MCP's and LSP's): messages that are not JSON, not objects, not
//     requests, notifications or responses; the jsonrpc member; ids reused
//     in flight; answers to no request; a result with an error; requests
//     never answered. No method, rate or limit of any host.
//   - MCP's (revisions 2025-06-18, 2025-11-25, 2026-07-28): stray stdout,
//     the initialize handshake, params and results against JSON Schemas of
//     the methods in both directions (schemas/mcp), the client's
//     capabilities, progress tokens, tool failures as JSON-RPC errors (and
//     the reverse), no id used twice in a session.
//   - LSP 3.17's: Content-Length and bytes outside any message, UTF-8
//     bodies, the lifecycle around initialize and shutdown, notifications
//     sent with an id.
//
// The schemas are validated with github.com/santhosh-tekuri/jsonschema/v6.
// Rules and RulesOf read back every rule with its level and citation, Sets
// every profile's; Methods, every method Agentty's host knows in both
// directions.
//
// A Checker runs incrementally: Feed it frames as they happen, then Finish.
// The batch command and the live recorder (through Lint) share it. The
// package reads no store and runs no process; it works on frame values only
// and never logs.
package check

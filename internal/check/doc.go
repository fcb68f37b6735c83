// Package check owns the protocol's rules: given a session's frames in
// order, it reports what the real Agentty host would reject, drop or punish
// (protocol/plugin-protocol-v1.md, protocol/host-behaviour.md), each finding
// tied to the frame that caused it.
//
// Message and UI-tree shapes are JSON Schema files (schemas/, embedded),
// one per plugin→host method, annotated with the API version that brought
// the method (x-since), the permission it needs (x-permission), the
// manifest section it acts on (x-section: browser/* and the sites of the
// manifest's browser section) and the rule a broken constraint belongs to
// (x-rule, x-rules); the UI tree is gated by API version by loading
// ui-tree.N.json as the tree. They are validated with
// github.com/santhosh-tekuri/jsonschema/v6. Counting, rate, id, site and
// lifecycle rules are code, and so are the host's answers that are its
// circumstance rather than the plugin's fault (the in-app browser
// unavailable: an info). Rules reads back every rule with its level;
// Methods, every method the host knows in both directions.
//
// A Checker runs incrementally: Feed it frames as they happen, then Finish.
// The batch command and the live recorder (through Lint) share it. The
// package reads no store and runs no process; it works on frame values only
// and never logs.
package check

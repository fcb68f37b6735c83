// Package check owns the protocol's rules: given a session's frames in
// order, it reports what the real Agentty host would reject, drop or punish
// (protocol/plugin-protocol-v1.md, protocol/host-behaviour.md), each finding
// tied to the frame that caused it.
//
// Message and UI-tree shapes are JSON Schema files (schemas/, embedded),
// one per plugin→host method, annotated with the API version that brought
// the method (x-since), the permission it needs (x-permission) and the rule
// a broken constraint belongs to (x-rule, x-rules); the UI tree is gated by
// API version by loading ui-tree.N.json as the tree. They are validated with
// github.com/santhosh-tekuri/jsonschema/v6. Counting, rate, id and lifecycle
// rules are code. Rules reads back every rule with its level.
//
// A Checker runs incrementally: Feed it frames as they happen, then Finish.
// The batch command and the live recorder (through Lint) share it. The
// package reads no store and runs no process; it works on frame values only
// and never logs.
package check

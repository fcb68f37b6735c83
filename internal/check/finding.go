package check

// Level is how badly the host treats what a finding names.
type Level string

// The levels, from worst to mildest.
const (
	// Error: the host rejects, drops or stops (a refused call, an ignored
	// line, a stopped or killed plugin).
	Error Level = "error"
	// Warning: a documented rule is broken but the host tolerates it (it
	// cuts, clamps or ignores the difference).
	Warning Level = "warning"
	// Info: something worth knowing that breaks no rule.
	Info Level = "info"
)

// Finding is one thing the host would do about a frame.
type Finding struct {
	Level Level  `json:"level"`
	Rule  string `json:"rule"` // a stable rule id, one of Rules
	// Seq is the frame concerned; 0 for a finding about the session as a
	// whole (for example that no manifest was found).
	Seq uint64 `json:"seq"`
	At  int64  `json:"at"` // the frame's time, nanoseconds since the start
	// Method is the JSON-RPC method concerned, "" when there is none.
	Method string `json:"method"`
	// Message is one line: what is wrong and what the host does about it.
	Message string `json:"message"`
	// Path is where inside the message, for example
	// "params.tree.children[2].label"; "" when it is about the whole line.
	Path string `json:"path"`
	// Spec cites the section of the specification the rule comes from,
	// for the session's protocol revision: "MCP 2025-11-25
	// basic/lifecycle", "LSP 3.17 shutdown", "JSON-RPC 2.0 §5",
	// "Agentty host-behaviour#limits".
	Spec string `json:"spec"`
}

// Rule describes one rule.
type Rule struct {
	ID    string `json:"id"`
	Level Level  `json:"level"`
	// Host says what the real host does; every finding of the rule ends
	// with it.
	Host string `json:"host"`
	// Code is the JSON-RPC error code the host answers a request with when
	// the rule makes the call fail, 0 otherwise.
	Code int `json:"code,omitempty"`
	// Spec cites the section of the specification the rule comes from; a
	// finding cites it for its session's protocol revision.
	Spec string `json:"spec"`
}

// Rule ids.
const (
	RuleLineNotJSON        = "line-not-json"
	RuleLineNotObject      = "line-not-object"
	RuleLineNoIDOrMethod   = "line-no-id-or-method"
	RuleLineInvalidUTF8    = "line-invalid-utf8"
	RuleLineTooLong        = "line-too-long"
	RuleLineCut            = "line-cut"
	RuleJSONRPCMissing     = "jsonrpc-missing"
	RuleIDReused           = "id-reused"
	RuleAnswerUnknownID    = "answer-unknown-id"
	RuleResponseMalformed  = "response-malformed"
	RuleRequestUnanswered  = "request-unanswered"
	RuleRequestLate        = "request-late"
	RuleInitUnanswered     = "initialize-unanswered"
	RuleMethodUnknown      = "method-unknown"
	RulePermissionMissing  = "permission-missing"
	RuleManifestMissing    = "manifest-missing"
	RuleParamsInvalid      = "params-invalid"
	RuleNotifyKind         = "notify-kind"
	RuleOpenURLScheme      = "openurl-scheme"
	RuleRevealPathAbsolute = "revealpath-absolute"
	RuleStorageKey         = "storage-key"
	RuleBadgeLength        = "badge-length"
	RuleCopyLength         = "copy-length"
	RuleTimerRange         = "timer-range"
	RuleMaxTurnsRange      = "maxturns-range"
	RuleTimerTooMany       = "timer-too-many"
	RuleFetchTooMany       = "fetch-too-many"
	RuleUIUnknownType      = "ui-unknown-type"
	RuleUIMissingField     = "ui-missing-field"
	RuleUIBadEnum          = "ui-bad-enum"
	RuleUIBadValue         = "ui-bad-value"
	RuleUITooMany          = "ui-too-many-elements"
	RuleUITooDeep          = "ui-too-deep"
	RuleUIStringCut        = "ui-string-cut"
	RuleUIDuplicateID      = "ui-duplicate-id"
	RuleRateMessages       = "rate-messages"
	RuleRateLines          = "rate-lines"
	RuleNotifyDropped      = "notify-dropped"
	RuleOpenURLRefused     = "openurl-refused"
	RuleShutdownTerm       = "shutdown-term"
	RuleShutdownKill       = "shutdown-kill"
	RuleStderrLineCut      = "stderr-line-cut"
	RuleBrowserNoSites     = "browser-no-sites"
	RuleBrowserSite        = "browser-site"
	RuleBrowserUnavailable = "browser-unavailable"
	RuleBrowserDeclined    = "browser-declined"
	// RuleLintStopped is the one finding a Lint writes when it falls
	// behind the plugin by more than 64 MiB of frames and stops.
	RuleLintStopped = "lint-stopped"
)

const (
	codeUnknownMethod = -32601
	codeInvalidParams = -32602
	codePermission    = -32001
	codeUnavailable   = -32002
)

// rejectTree is what the host does with a UI tree it refuses.
const rejectTree = "the host rejects the whole ui/setPanel (-32602) and the old panel stays"

// Rules returns every rule of Agentty's profile (the rules of every
// session recorded before profiles had names), in a fixed order; RulesOf
// gives any profile's. The slice is new on every call.
func Rules() []Rule {
	rules := agenttyRules()
	for i := range rules {
		rules[i].Spec = agenttySpec(rules[i].ID)
	}
	return rules
}

// agenttySpec is the section of protocol/plugin-protocol-v1.md or
// protocol/host-behaviour.md a rule of Agentty's comes from, named by the
// file and a short form of the section's title.
func agenttySpec(rule string) string {
	section := "host-behaviour/limits"
	switch rule {
	case RuleLineNotJSON, RuleLineNotObject, RuleLineNoIDOrMethod, RuleLineInvalidUTF8, RuleLineTooLong,
		RuleJSONRPCMissing, RuleStderrLineCut, RuleLineCut:
		section = "host-behaviour/reading-stdout"
	case RuleIDReused, RuleAnswerUnknownID, RuleResponseMalformed, RuleRequestUnanswered, RuleMethodUnknown,
		RulePermissionMissing, RuleParamsInvalid, RuleBrowserUnavailable, RuleBrowserDeclined:
		section = "host-behaviour/answers"
	case RuleRequestLate, RuleStorageKey, RuleFetchTooMany:
		section = "host-behaviour/methods-after-api-1"
	case RuleInitUnanswered:
		section = "plugin-protocol-v1/host-to-plugin"
	case RuleManifestMissing:
		return "tapedeck check --manifest"
	case RuleShutdownTerm, RuleShutdownKill:
		section = "host-behaviour/stopping"
	case RuleNotifyKind, RuleOpenURLScheme, RuleRevealPathAbsolute, RuleBrowserNoSites, RuleBrowserSite:
		section = "plugin-protocol-v1/plugin-to-host"
	case RuleUIUnknownType, RuleUIMissingField, RuleUIBadEnum, RuleUIBadValue, RuleUIDuplicateID:
		section = "plugin-protocol-v1/ui-tree"
	case RuleLintStopped:
		return "tapedeck record --lint"
	}
	return "Agentty " + section
}

// agenttyRules is Agentty's rule table, without citations.
func agenttyRules() []Rule {
	return []Rule{
		{ID: RuleLineNotJSON, Level: Warning, Host: "the host logs it as stray output and ignores it"},
		{ID: RuleLineNotObject, Level: Error, Host: "the host logs it as stray output and drops it (one JSON object per line; batches are not supported)"},
		{ID: RuleLineNoIDOrMethod, Level: Error, Host: "the host logs it as stray output and drops it"},
		{ID: RuleLineInvalidUTF8, Level: Warning, Host: "the host replaces the bad bytes with U+FFFD before parsing"},
		{ID: RuleLineTooLong, Level: Error, Host: "the host logs it and stops reading the plugin's stdout for good: nothing after it arrives"},
		{ID: RuleLineCut, Level: Info, Host: "its contents were not checked"},
		{ID: RuleJSONRPCMissing, Level: Warning, Host: `the host never checks it, but JSON-RPC 2.0 requires "jsonrpc":"2.0"`},
		{ID: RuleIDReused, Level: Warning, Host: "the host answers both with the same id, so the plugin cannot tell the answers apart"},
		{ID: RuleAnswerUnknownID, Level: Error, Host: "the host has no request pending with this id and drops the answer"},
		{ID: RuleResponseMalformed, Level: Warning, Host: "JSON-RPC 2.0 wants exactly one of result and error, an error being {code, message}; the host matches answers by id only"},
		{ID: RuleRequestUnanswered, Level: Error, Host: "the host waits for an answer that never comes (a tools/call fails after 120 s)"},
		{ID: RuleRequestLate, Level: Error, Host: "the host gives up on a tools/call after 120 s and drops the late answer"},
		{ID: RuleInitUnanswered, Level: Warning, Host: "the host goes on without it, but the protocol says to answer initialize at once"},
		{ID: RuleMethodUnknown, Level: Error, Host: "the host answers -32601 (unknown method) to a request and ignores a notification", Code: codeUnknownMethod},
		{ID: RulePermissionMissing, Level: Error, Host: "the host refuses it with -32001 (permission missing)", Code: codePermission},
		{ID: RuleManifestMissing, Level: Info, Host: "permission rules are skipped"},
		{ID: RuleParamsInvalid, Level: Error, Host: "the host refuses it with -32602 (invalid params)", Code: codeInvalidParams},
		{ID: RuleNotifyKind, Level: Error, Host: "the host refuses it with -32602: kind is info, success, warning or error", Code: codeInvalidParams},
		{ID: RuleOpenURLScheme, Level: Error, Host: "the host refuses it with -32602: only http and https links are opened", Code: codeInvalidParams},
		{ID: RuleRevealPathAbsolute, Level: Error, Host: "the host refuses it with -32602: the path must be absolute", Code: codeInvalidParams},
		{ID: RuleStorageKey, Level: Error, Host: "the host refuses a bad key with -32602", Code: codeInvalidParams},
		{ID: RuleBadgeLength, Level: Warning, Host: "the host cuts badge text to 8 characters"},
		{ID: RuleCopyLength, Level: Warning, Host: "the host copies at most 100,000 characters"},
		{ID: RuleTimerRange, Level: Warning, Host: "the host clamps ms to 100 … 3,600,000 (1 h)"},
		{ID: RuleMaxTurnsRange, Level: Warning, Host: "the host allows maxTurns 1 … 2000"},
		{ID: RuleTimerTooMany, Level: Warning, Host: "the host runs at most 8 timers at once"},
		{ID: RuleFetchTooMany, Level: Warning, Host: "the host runs at most 4 fetches at once"},
		{ID: RuleUIUnknownType, Level: Error, Host: rejectTree, Code: codeInvalidParams},
		{ID: RuleUIMissingField, Level: Error, Host: rejectTree, Code: codeInvalidParams},
		{ID: RuleUIBadEnum, Level: Error, Host: rejectTree, Code: codeInvalidParams},
		{ID: RuleUIBadValue, Level: Error, Host: rejectTree, Code: codeInvalidParams},
		{ID: RuleUITooMany, Level: Error, Host: rejectTree + " (at most 2,000 elements, counting list items, actions, options, rows and cells)", Code: codeInvalidParams},
		{ID: RuleUITooDeep, Level: Error, Host: rejectTree + " (at most 12 levels below the root)", Code: codeInvalidParams},
		{ID: RuleUIStringCut, Level: Warning, Host: "the host cuts UI strings at 20,000 characters"},
		{ID: RuleUIDuplicateID, Level: Warning, Host: "the host does not check, but events name elements by id, so the two cannot be told apart"},
		{ID: RuleRateMessages, Level: Error, Host: "the host stops a plugin that sends more than 240 messages (stdout and stderr lines) in its one-second window"},
		{ID: RuleRateLines, Level: Error, Host: "the host stops a plugin that writes more than 480 stdout lines in its one-second window"},
		{ID: RuleNotifyDropped, Level: Error, Host: "the host drops a ui/notify within 700 ms of the last one shown (and still answers null)"},
		{ID: RuleOpenURLRefused, Level: Error, Host: "the host refuses a second host/openUrl within 700 ms with -32002", Code: codeUnavailable},
		{ID: RuleShutdownTerm, Level: Error, Host: "the host sends SIGTERM to a plugin still running 1.5 s after shutdown (or stdin close)"},
		{ID: RuleShutdownKill, Level: Error, Host: "the host sends SIGKILL to a plugin still running 3 s after shutdown (or stdin close)"},
		{ID: RuleStderrLineCut, Level: Info, Host: "the plugin log cuts a line at 2,000 characters"},
		{ID: RuleBrowserNoSites, Level: Error, Host: "the host drives the in-app browser only on the sites of the manifest's browser section: with none, it opens no page (-32602) and the user's consent grants nothing", Code: codeInvalidParams},
		{ID: RuleBrowserSite, Level: Error, Host: "the host opens pages only on the sites the manifest's browser.sites names (https, plain http only on localhost) and refuses others with -32602", Code: codeInvalidParams},
		{ID: RuleBrowserUnavailable, Level: Info, Host: "the in-app browser was unavailable (private mode, no web view, 3 tabs per plugin already open, the page gone or not loaded in time): not a fault of the traffic, but the plugin must expect it"},
		{ID: RuleBrowserDeclined, Level: Info, Host: "the manifest grants browser.control, so the user did not allow this plugin the browser, or a link reached the plugin: not a fault of the traffic, but the plugin must expect it"},
		{ID: RuleLintStopped, Level: Info, Host: "the rest of the session was not checked live"},
	}
}

// SessionNotes is what a recording stores about its frames beside them
// (record --lint writes it, show reads it).
type SessionNotes struct {
	Findings []Finding `json:"findings"`
}

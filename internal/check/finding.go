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

// Rules returns every rule, in a fixed order. The slice is new on every
// call.
func Rules() []Rule {
	return []Rule{
		{RuleLineNotJSON, Warning, "the host logs it as stray output and ignores it", 0},
		{RuleLineNotObject, Error, "the host logs it as stray output and drops it (one JSON object per line; batches are not supported)", 0},
		{RuleLineNoIDOrMethod, Error, "the host logs it as stray output and drops it", 0},
		{RuleLineInvalidUTF8, Warning, "the host replaces the bad bytes with U+FFFD before parsing", 0},
		{RuleLineTooLong, Error, "the host logs it and stops reading the plugin's stdout for good: nothing after it arrives", 0},
		{RuleLineCut, Info, "its contents were not checked", 0},
		{RuleJSONRPCMissing, Warning, `the host never checks it, but JSON-RPC 2.0 requires "jsonrpc":"2.0"`, 0},
		{RuleIDReused, Warning, "the host answers both with the same id, so the plugin cannot tell the answers apart", 0},
		{RuleAnswerUnknownID, Error, "the host has no request pending with this id and drops the answer", 0},
		{RuleResponseMalformed, Warning, "JSON-RPC 2.0 wants exactly one of result and error, an error being {code, message}; the host matches answers by id only", 0},
		{RuleRequestUnanswered, Error, "the host waits for an answer that never comes (a tools/call fails after 120 s)", 0},
		{RuleRequestLate, Error, "the host gives up on a tools/call after 120 s and drops the late answer", 0},
		{RuleInitUnanswered, Warning, "the host goes on without it, but the protocol says to answer initialize at once", 0},
		{RuleMethodUnknown, Error, "the host answers -32601 (unknown method) to a request and ignores a notification", codeUnknownMethod},
		{RulePermissionMissing, Error, "the host refuses it with -32001 (permission missing)", codePermission},
		{RuleManifestMissing, Info, "permission rules are skipped", 0},
		{RuleParamsInvalid, Error, "the host refuses it with -32602 (invalid params)", codeInvalidParams},
		{RuleNotifyKind, Error, "the host refuses it with -32602: kind is info, success, warning or error", codeInvalidParams},
		{RuleOpenURLScheme, Error, "the host refuses it with -32602: only http and https links are opened", codeInvalidParams},
		{RuleRevealPathAbsolute, Error, "the host refuses it with -32602: the path must be absolute", codeInvalidParams},
		{RuleStorageKey, Error, "the host refuses a bad key with -32602", codeInvalidParams},
		{RuleBadgeLength, Warning, "the host cuts badge text to 8 characters", 0},
		{RuleCopyLength, Warning, "the host copies at most 100,000 characters", 0},
		{RuleTimerRange, Warning, "the host clamps ms to 100 … 3,600,000 (1 h)", 0},
		{RuleMaxTurnsRange, Warning, "the host allows maxTurns 1 … 2000", 0},
		{RuleTimerTooMany, Warning, "the host runs at most 8 timers at once", 0},
		{RuleFetchTooMany, Warning, "the host runs at most 4 fetches at once", 0},
		{RuleUIUnknownType, Error, rejectTree, codeInvalidParams},
		{RuleUIMissingField, Error, rejectTree, codeInvalidParams},
		{RuleUIBadEnum, Error, rejectTree, codeInvalidParams},
		{RuleUIBadValue, Error, rejectTree, codeInvalidParams},
		{RuleUITooMany, Error, rejectTree + " (at most 2,000 elements, counting list items, actions, options, rows and cells)", codeInvalidParams},
		{RuleUITooDeep, Error, rejectTree + " (at most 12 levels below the root)", codeInvalidParams},
		{RuleUIStringCut, Warning, "the host cuts UI strings at 20,000 characters", 0},
		{RuleUIDuplicateID, Warning, "the host does not check, but events name elements by id, so the two cannot be told apart", 0},
		{RuleRateMessages, Error, "the host stops a plugin that sends more than 240 messages (stdout and stderr lines) in its one-second window", 0},
		{RuleRateLines, Error, "the host stops a plugin that writes more than 480 stdout lines in its one-second window", 0},
		{RuleNotifyDropped, Error, "the host drops a ui/notify within 700 ms of the last one shown (and still answers null)", 0},
		{RuleOpenURLRefused, Error, "the host refuses a second host/openUrl within 700 ms with -32002", codeUnavailable},
		{RuleShutdownTerm, Error, "the host sends SIGTERM to a plugin still running 1.5 s after shutdown (or stdin close)", 0},
		{RuleShutdownKill, Error, "the host sends SIGKILL to a plugin still running 3 s after shutdown (or stdin close)", 0},
		{RuleStderrLineCut, Info, "the plugin log cuts a line at 2,000 characters", 0},
		{RuleBrowserNoSites, Error, "the host drives the in-app browser only on the sites of the manifest's browser section: with none, it opens no page (-32602) and the user's consent grants nothing", codeInvalidParams},
		{RuleBrowserSite, Error, "the host opens pages only on the sites the manifest's browser.sites names (https, plain http only on localhost) and refuses others with -32602", codeInvalidParams},
		{RuleBrowserUnavailable, Info, "the in-app browser was unavailable (private mode, no web view, 3 tabs per plugin already open, the page gone or not loaded in time): not a fault of the traffic, but the plugin must expect it", 0},
		{RuleBrowserDeclined, Info, "the manifest grants browser.control, so the user did not allow this plugin the browser, or a link reached the plugin: not a fault of the traffic, but the plugin must expect it", 0},
		{RuleLintStopped, Info, "the rest of the session was not checked live", 0},
	}
}

// SessionNotes is what a recording stores about its frames beside them
// (record --lint writes it, show reads it).
type SessionNotes struct {
	Findings []Finding `json:"findings"`
}

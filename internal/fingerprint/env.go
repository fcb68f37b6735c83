package fingerprint

import (
	"os"
	"sort"
	"strings"
)

// sessionVar reports whether a variable belongs to a terminal session, a
// shell, CI or tapedeck itself rather than to the plugin: a replay
// elsewhere (in CI) lacks it and that says nothing. (Plain code rather
// than a regexp: this package is linked into the capture shim, and a
// package-level regexp is compiled at every start of the binary.)
func sessionVar(k string) bool {
	switch k {
	case "_", "PWD", "OLDPWD", "SHLVL", "SHELL", "TERM", "COLORTERM", "COLUMNS", "LINES", "DISPLAY",
		"STY", "WINDOW", "WINDOWID", "LS_COLORS", "PAGER", "EDITOR", "VISUAL", "MAIL", "LOGNAME",
		"USER", "HOSTNAME", "PROMPT_COMMAND", "MOTD_SHOWN", "DESKTOP_SESSION", "SESSION_MANAGER",
		"INVOCATION_ID", "JOURNAL_STREAM", "CI", "PS1", "PS2", "PS3", "PS4":
		return true
	}
	for _, p := range []string{"TERM_", "WAYLAND_", "XDG_", "DBUS_", "SSH_", "GPG_", "TMUX", "VTE_", "KONSOLE_",
		"ITERM_", "LESS", "HIST", "GNOME_", "KDE_", "SYSTEMD_", "TAPEDECK_", "GO", "GITHUB_", "RUNNER_"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// validName reports whether k is a variable name worth naming:
// [A-Za-z_][A-Za-z0-9_]*.
func validName(k string) bool {
	for i, c := range k {
		letter := c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return k != ""
}

// localeVar reports whether a variable changes how times, numbers and
// text are spelled.
func localeVar(k string) bool {
	return k == "TZ" || k == "LANG" || k == "LANGUAGE" || strings.HasPrefix(k, "LC_")
}

// environment takes the locale (names and values) and the names of the
// other variables of env (nil: ours). With tapedeck's pinned clock in env,
// NODE_OPTIONS and PYTHONPATH are the pin's and not named.
func environment(env []string) (locale map[string]string, names []string) {
	if env == nil {
		env = os.Environ()
	}
	seen := map[string]bool{}
	pinned := false
	for _, kv := range env {
		pinned = pinned || strings.HasPrefix(kv, "TAPEDECK_CLOCK_")
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !validName(k) {
			continue
		}
		if localeVar(k) {
			if locale == nil {
				locale = map[string]string{}
			}
			locale[k] = v
			continue
		}
		if sessionVar(k) || seen[k] || pinned && (k == "NODE_OPTIONS" || k == "PYTHONPATH") {
			continue
		}
		seen[k] = true
		names = append(names, k)
	}
	sort.Strings(names)
	return locale, names
}

package cli

// The plugin folder argument of wrap, unwrap and doctor.

// pluginDir is the one optional DIR argument of wrap, unwrap and doctor
// (the command named cmd), from its arguments.
func pluginDir(cmd string, args []string) (string, error) {
	switch len(args) {
	case 0:
		return ".", nil
	case 1:
		return args[0], nil
	}
	return "", fail(2, "%s takes one plugin folder, got %d arguments (flags go before the folder)", cmd, len(args))
}

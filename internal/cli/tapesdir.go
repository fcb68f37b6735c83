package cli

// Where tapes are when no path is named: one convention for play, test,
// review and coverage.

import "os"

// The folders tapes are looked for in when the command line names none,
// in order: play's "Keep it" writes into tapes/ of the plugin folder, and
// the README keeps a repository's golden tapes under testdata/.
const (
	tapesFolder       = "tapes"
	testdataFolder    = "testdata"
	defaultTapesUsage = "default " + tapesFolder + "/ and " + testdataFolder + "/"
)

// tapePaths are the paths a command named, else the folders tapes are
// looked for in that are here; when none is, an error of one line that
// says where it looked (cmd names the command in what to do).
func tapePaths(args []string, cmd string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	var paths []string
	for _, d := range []string{tapesFolder, testdataFolder} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			paths = append(paths, d)
		}
	}
	if len(paths) == 0 {
		return nil, fail(2, "%s: no tapes here: looked in %s/ (where tapedeck play's \"Keep it\" writes them) and %s/; name a folder or a tape: tapedeck %s PATH", cmd, tapesFolder, testdataFolder, cmd)
	}
	return paths, nil
}

package cli

// The public test corpora in ../shared, and the tests too big for -race.

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tapedeck/tapedeck/internal/race"
)

// sharedDir is ../shared, or "" when it is absent.
func sharedDir(t *testing.T) string {
	t.Helper()
	d, _ := filepath.Abs("../shared")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// skipBigUnderRace skips a test that moves many megabytes through the
// race-built binary: the plain run (go test ./...) covers it, and under the
// race detector it only costs minutes.
func skipBigUnderRace(t *testing.T) {
	t.Helper()
	if race.Enabled {
		t.Skip("multi-MiB byte fidelity is tested without -race; under the race detector it only costs time")
	}
}

// jsonTestSuite is every file of ../shared/corpora/JSONTestSuite/test_parsing
// as a line (some hold raw newlines, NUL, U+2028, invalid UTF-8); it skips
// the test, saying why, when the corpus is absent.
func jsonTestSuite(t *testing.T) []byte {
	t.Helper()
	shared := sharedDir(t)
	if shared == "" {
		t.Skip("../shared is absent: the JSONTestSuite corpus is not available")
	}
	files, _ := filepath.Glob(filepath.Join(shared, "corpora/JSONTestSuite/test_parsing/*.json"))
	if len(files) == 0 {
		t.Skip("no JSONTestSuite files under ../shared/corpora")
	}
	sort.Strings(files)
	var input bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		input.Write(b)
		input.WriteByte('\n')
	}
	return input.Bytes()
}

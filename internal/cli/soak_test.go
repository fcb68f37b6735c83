package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// soakRounds is how many rounds a repeated-run proof runs: full in CI's
// soak step (TAPEDECK_SOAK set; testdata/soak-tests names the tests), a
// few otherwise, so that the plain run still exercises it.
func soakRounds(t *testing.T, full, few int) int {
	t.Helper()
	soakLater(t)
	if os.Getenv("TAPEDECK_SOAK") != "" && !testing.Short() {
		return full
	}
	t.Logf("%d rounds (TAPEDECK_SOAK=1 runs %d)", few, full)
	return few
}

// soakSubtest is called first in each subtest of a repeated-run proof:
// with a few rounds the subtests run side by side; at full strength one
// after the other, each with the loaded machine to itself (soakLoad).
func soakSubtest(t *testing.T) {
	if os.Getenv("TAPEDECK_SOAK") == "" || testing.Short() {
		t.Parallel()
	}
}

// soakLoad is called first by a repeated-run proof: at full strength it
// loads every core (busy) while its rounds run, and runs alone; with a few
// rounds it runs in parallel with the other tests, which are load enough.
// TAPEDECK_SOAK_LOAD=outside says the machine is loaded from outside
// (CI runs its fuzz smoke beside the soak, then spins until the soak
// ends): busy goroutines would only take the CPU from that work.
func soakLoad(t *testing.T) {
	if os.Getenv("TAPEDECK_SOAK") != "" && !testing.Short() {
		if os.Getenv("TAPEDECK_SOAK_LOAD") != "outside" {
			busy(t)
		}
		return
	}
	t.Parallel()
}

// soakLater skips a test of testdata/soak-tests when TAPEDECK_SOAK_LATER
// is set: CI sets it for the README's test command, as its soak step runs
// these same tests at full strength after it (33 of the plain cli tests'
// 225 CPU seconds were these at a few rounds). Without it, as a newcomer
// runs go test, they run a few rounds each.
func soakLater(t *testing.T) {
	t.Helper()
	if os.Getenv("TAPEDECK_SOAK_LATER") != "" && os.Getenv("TAPEDECK_SOAK") == "" {
		t.Skip("CI's soak step runs it at full strength (TAPEDECK_SOAK_LATER)")
	}
}

// TestSoakTestsAreNamed: the tests that soakLater skips in CI's test step
// are the ones its soak step runs (testdata/soak-tests), so that none is
// skipped in both, and none runs twice.
func TestSoakTestsAreNamed(t *testing.T) {
	t.Parallel()
	named, err := os.ReadFile("internal/cli/testdata/soak-tests")
	if err != nil {
		t.Fatal(err)
	}
	re, err := regexp.Compile(strings.TrimSpace(string(named)))
	if err != nil {
		t.Fatalf("testdata/soak-tests: %v", err)
	}
	files, err := filepath.Glob("internal/cli/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range strings.Split(string(src), "\nfunc ")[1:] {
			test, _, ok := strings.Cut(fn, "(t *testing.T) {")
			if !ok || !strings.HasPrefix(test, "Test") || strings.ContainsAny(test, " \n") || test == "TestSoakTestsAreNamed" {
				continue
			}
			soaks := strings.Contains(fn, "soakRounds(t,") || strings.Contains(fn, "soakLater(t)")
			switch named := re.MatchString(test); {
			case named && !soaks:
				t.Errorf("%s: testdata/soak-tests names it, but it calls neither soakRounds nor soakLater", test)
			case soaks && !named:
				t.Errorf("%s: it calls soakRounds or soakLater, but testdata/soak-tests does not name it (CI would run it in neither step)", test)
			case named:
				found++
			}
		}
	}
	if want := strings.Count(string(named), "|") + 1; found != want {
		t.Errorf("found %d of the %d tests testdata/soak-tests names", found, want)
	}
}

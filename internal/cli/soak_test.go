package cli

import (
	"os"
	"testing"
)

// soakRounds is how many rounds a repeated-run proof runs: full in CI's
// soak step (TAPEDECK_SOAK set; testdata/soak-tests names the tests), a
// few otherwise, so that the plain run still exercises it.
func soakRounds(t *testing.T, full, few int) int {
	t.Helper()
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

package store

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tapedeck/tapedeck/frame"
)

// TestHealthDuringCommitsSeesNoDamage: Health (and Verify), called while another
// handle commits session after session (the file growing, the freelist
// moving), never takes the sound file for a damaged one. Without the
// store's shared lock it read a meta page, then a freelist that a commit
// had rewritten since, and said "freelist page N names page M, outside
// the file's …" (CI, TestManyShimsOneStore under the race detector).
func TestHealthDuringCommitsSeesNoDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writer, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	writer.noSync = true
	reader, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	frames := benchFrames(40)
	done := make(chan error, 1)
	go func() {
		base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range 300 {
			started := base.Add(time.Duration(i) * time.Minute)
			meta := frame.Session{ID: frame.NewID(started), Name: fmt.Sprintf("s%d", i), Command: []string{"plugin"}, Started: started, Status: frame.StatusComplete}
			if err := writer.Put(meta, benchSliceSource(frames)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	checks := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if checks == 0 {
				t.Fatal("Health never ran while the writer committed: the test tests nothing")
			}
			t.Logf("%d Health checks during 300 commits", checks)
			return
		default:
		}
		if err := reader.Health(); errors.Is(err, ErrDamaged) {
			<-done
			t.Fatalf("after %d checks, Health during commits: %v", checks, err)
		}
		if checks%20 == 0 {
			if v, err := reader.Verify(); err != nil || len(v.Problems) > 0 {
				<-done
				t.Fatalf("after %d checks, Verify during commits: %v %v", checks, err, v)
			}
		}
		checks++
	}
}

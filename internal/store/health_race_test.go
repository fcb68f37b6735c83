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
//
// The two take turns loosely: the writer commits once the reader has
// made checksPerCommit checks since its last commit, and the reader,
// after every round of checks, waits for a commit, letting go of the lock
// between rounds. So a commit's wait for the lock overlaps the reader's
// checks, and there are at least 1,800 checks in all (the bug showed in
// 1,100 to 1,600). A reader that checked without end held the lock so
// nearly always that a commit, which polls for it, waited out its 10 s
// (CI under the race detector, load 8).
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
	const commits, checksPerCommit, round = 300, 6, 8
	done := make(chan error, 1)
	committed := make(chan struct{}, 1)
	checked := make(chan struct{}, commits*round) // never full: the reader waits for a commit each round
	stop := make(chan struct{})
	go func() {
		base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range commits {
			for range checksPerCommit {
				select {
				case <-checked:
				case <-stop:
					done <- nil
					return
				}
			}
			started := base.Add(time.Duration(i) * time.Minute)
			meta := frame.Session{ID: frame.NewID(started), Name: fmt.Sprintf("s%d", i), Command: []string{"plugin"}, Started: started, Status: frame.StatusComplete}
			if err := writer.Put(meta, benchSliceSource(frames)); err != nil {
				done <- err
				return
			}
			select {
			case committed <- struct{}{}:
			default:
			}
		}
		done <- nil
	}()
	checks := 0
	fail := func(format string, args ...any) {
		t.Helper()
		close(stop)
		<-done
		t.Fatalf(format, args...)
	}
	for {
		if checks > 0 && checks%round == 0 {
			select {
			case <-committed:
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d Health checks during %d commits", checks, commits)
				return
			}
		}
		if err := reader.Health(); errors.Is(err, ErrDamaged) {
			fail("after %d checks, Health during commits: %v", checks, err)
		}
		if checks%20 == 0 {
			if v, err := reader.Verify(); err != nil || len(v.Problems) > 0 {
				fail("after %d checks, Verify during commits: %v %v", checks, err, v)
			}
		}
		checks++
		checked <- struct{}{}
	}
}

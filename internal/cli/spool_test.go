package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// holdDB starts a process that holds the store's database (which must
// exist) open, and so its lock, until release is called.
func holdDB(t *testing.T, store string) (release func(), pid int) {
	t.Helper()
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), "TAPEDECK_FIXTURE=holddb", "FIXTURE_DB="+filepath.Join(store, "tapedeck.db"))
	in, _ := holder.StdinPipe()
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("lock holder: %q %v", line, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			in.Close()
			holder.Wait()
		})
	}
	t.Cleanup(release)
	return release, holder.Process.Pid
}

// TestSpoolBitFlipIsStoredAsDamaged is the audit's attack: a session of
// 27,100 frames stays in its spool (the database was locked when it
// ended), one byte a third of the way in is flipped, and the next command
// takes it in. Before, that stored a third of the frames as interrupted,
// said nothing and deleted the spool. Now every frame but those of the
// damaged record (the lines of one read) is stored, the session says
// damaged and how many bytes were unreadable, its exit status is kept, the
// spool is kept aside, and one line says so, once.
func TestSpoolBitFlipIsStoredAsDamaged(t *testing.T) {
	t.Parallel()
	if race.Enabled {
		t.Skip("27,100 frames through the race-built shim only cost time; the plain run covers the reading, store/spool_test.go the races")
	}
	store := t.TempDir()
	if r := recordFixture(t, store, "echo", []byte("{}\n")); r.code != 0 {
		t.Fatalf("first record: %d %s", r.code, r.stderr)
	}
	release, _ := holdDB(t, store)
	input := someLines(13550, 20)
	r := recordFixture(t, store, "echo", input, "FIXTURE_CODE=0")
	release()
	if r.code != 0 || !bytes.Equal(r.stdout, input) {
		t.Fatalf("record: exit %d, %d of %d bytes; %s", r.code, len(r.stdout), len(input), r.stderr)
	}
	spools, _ := filepath.Glob(filepath.Join(store, "spool", "*.spool"))
	if len(spools) != 1 {
		t.Fatalf("spools %v: want the one the locked database left", spools)
	}
	id := strings.TrimSuffix(filepath.Base(spools[0]), ".spool")
	b, err := os.ReadFile(spools[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0x20
	os.WriteFile(spools[0], b, 0o600)

	ls := tapedeck(t, store, nil, nil, "ls")
	if ls.code != 0 || !strings.Contains(string(ls.stdout), frame.StatusDamaged) {
		t.Fatalf("ls: exit %d\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	oneLine(t, ls.stderr, id)
	if !strings.Contains(string(ls.stderr), "damaged") {
		t.Errorf("the message does not say damaged: %s", ls.stderr)
	}
	var s *frame.Session
	for _, m := range lsJSON(t, store) {
		if m.ID == id {
			s = &m
		}
	}
	if s == nil {
		t.Fatal("the session is not listed")
	}
	if s.Status != frame.StatusDamaged || s.Unreadable <= 0 || s.Exit.Code == nil || *s.Exit.Code != 0 {
		t.Errorf("status %s, unreadable %d, exit %+v", s.Status, s.Unreadable, s.Exit)
	}
	// What is missing is what the damaged record held: the lines of one
	// read (a record holds a read's lines, up to the relay's 128 KiB
	// read), in a row, of one direction; every frame stored is a line
	// sent, at its place.
	_, frames := exported(t, store, id)
	sent := lines(input)
	var missing []int
	var missingBytes int
	dirs := 0
	for _, d := range []frame.Dir{frame.In, frame.Out} {
		stored := framesOf(frames, d)
		k, before := 0, len(missing)
		for _, f := range stored {
			for k < len(sent) && !bytes.Equal(sent[k], f) {
				missing, missingBytes = append(missing, k), missingBytes+len(sent[k])+1
				k++
			}
			if k == len(sent) {
				t.Fatalf("%s: a stored frame was never sent (misread): %.60q", d, f)
			}
			k++
		}
		for ; k < len(sent); k++ {
			missing, missingBytes = append(missing, k), missingBytes+len(sent[k])+1
		}
		if len(missing) > before {
			dirs++
		}
	}
	if len(missing) == 0 || dirs != 1 || missing[len(missing)-1]-missing[0] != len(missing)-1 || missingBytes > 128<<10 {
		t.Errorf("missing %d lines (%d bytes) in %d directions: want the lines of one record, in a row, at most 128 KiB", len(missing), missingBytes, dirs)
	}
	if n := s.Frames.In + s.Frames.Out; n != 27100-int64(len(missing)) {
		t.Errorf("%d frames counted, %d stored", n, 27100-len(missing))
	}
	if s.Unreadable < int64(missingBytes) {
		t.Errorf("%d bytes said unreadable, the missing lines are %d", s.Unreadable, missingBytes)
	}
	if kept, _ := filepath.Glob(filepath.Join(store, "spool", "damaged", id+".spool*")); len(kept) != 1 {
		t.Errorf("spool/damaged holds %v, want the spool", kept)
	}
	show := tapedeck(t, store, nil, nil, "show", id)
	if show.code != 0 || !strings.Contains(string(show.stdout), "damaged") || len(show.stderr) != 0 {
		t.Errorf("show: exit %d, header %.200q, stderr %q", show.code, show.stdout, show.stderr)
	}
}

// TestUnreadableSpoolBlocksNothing: a file in the spool folder that is no
// spool used to make every command fail with "not a spool file". Each
// command now works; the first says once that the file was moved aside.
func TestUnreadableSpoolBlocksNothing(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	if r := recordFixture(t, store, "echo", []byte("{\"a\":1}\n")); r.code != 0 {
		t.Fatalf("record: %d %s", r.code, r.stderr)
	}
	bad := filepath.Join(store, "spool", "01zzzzzzzzzzzzzzzzzzzzzzzz.spool")
	os.WriteFile(bad, []byte("TDSPOOL\x07 written by something else"), 0o600)
	var told int
	for _, args := range [][]string{{"ls"}, {"show", "last"}, {"export", "last"}, {"check", "last"}, {"ls", "--json"}} {
		r := tapedeck(t, store, nil, nil, args...)
		if r.code != 0 && !(args[0] == "check" && r.code == 1) {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		if strings.Contains(string(r.stderr), "moved to") {
			told++
			oneLine(t, r.stderr, filepath.Base(bad))
		}
	}
	if told != 1 {
		t.Errorf("the unreadable spool was told %d times, want once", told)
	}
	if _, err := os.Stat(filepath.Join(store, "spool", "damaged", filepath.Base(bad))); err != nil {
		t.Errorf("not kept aside: %v", err)
	}
	if r := tapedeck(t, store, nil, nil, "rm", "last"); r.code != 0 {
		t.Errorf("rm: exit %d: %s", r.code, r.stderr)
	}
}

// TestRecordWithoutRecording: --no-record (and TAPEDECK_NO_RECORD) relays
// as record does and leaves the store alone.
func TestRecordWithoutRecording(t *testing.T) {
	t.Parallel()
	input := someLines(100, 10)
	for _, how := range []struct {
		flag []string
		env  []string
	}{{flag: []string{"--no-record"}}, {env: []string{"TAPEDECK_NO_RECORD=1"}}} {
		store := filepath.Join(t.TempDir(), "store")
		argv, env := fixture("exit", "FIXTURE_CODE=3")
		r := tapedeck(t, store, input, append(env, how.env...), append(append([]string{"record"}, how.flag...), argv...)...)
		if r.code != 3 {
			t.Fatalf("%v %v: exit %d: %s", how.flag, how.env, r.code, r.stderr)
		}
		argv, env = fixture("echo")
		r = tapedeck(t, store, input, append(env, how.env...), append(append([]string{"record"}, how.flag...), argv...)...)
		if r.code != 0 || !bytes.Equal(r.stdout, input) || len(r.stderr) != 0 {
			t.Fatalf("%v %v: exit %d, %d of %d bytes, stderr %q", how.flag, how.env, r.code, len(r.stdout), len(input), r.stderr)
		}
		if _, err := os.Stat(store); !os.IsNotExist(err) {
			t.Errorf("%v %v: the store was made: %v", how.flag, how.env, err)
		}
	}
}

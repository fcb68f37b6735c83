package cli

// The store's safety, end to end: a cycle of pages, a 0-byte database,
// a damaged frame under gc, lost frames, a read-only store, a store
// folder others can write.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/race"
)

// boundedTapedeck runs the binary under a limit of address space (limitMB,
// for it and the plugin it starts: generous, as threads' stacks count) and
// a deadline, so that a command that loops or grows without bound fails
// the test instead of taking the machine: it returns the result, how long
// the command took, and its peak RSS in MB.
func boundedTapedeck(t *testing.T, store string, limitMB int, deadline time.Duration, env []string, args ...string) (result, time.Duration, float64) {
	t.Helper()
	return boundedShell(t, store, limitMB, deadline, env, "", args...)
}

// boundedQuiet is boundedTapedeck with the command's stdout thrown away
// (by the shell, so that a big output does not grow the test process,
// whose peak a child's peak RSS starts from).
func boundedQuiet(t *testing.T, store string, limitMB int, deadline time.Duration, env []string, args ...string) (result, time.Duration, float64) {
	t.Helper()
	return boundedShell(t, store, limitMB, deadline, env, " >/dev/null", args...)
}

func boundedShell(t *testing.T, store string, limitMB int, deadline time.Duration, env []string, redirect string, args ...string) (result, time.Duration, float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`+redirect, limitMB<<10)
	if race.Enabled {
		// The race detector's shadow memory needs address space far beyond
		// any such limit; the deadline still holds.
		script = `exec "$0" "$@"` + redirect
	}
	peak := filepath.Join(t.TempDir(), "peak")
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, peakRSSProgram(t), peak, tapedeckBin, "--store", store}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	r := runCommand(t, cmd)
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("tapedeck %s did not end within %v (it loops); stderr %.300q", strings.Join(args, " "), deadline, r.stderr)
	}
	return r, took, float64(readPeakKiB(t, peak)) / 1024
}

// peakRSSProgram is testdata/peakrss, which runs a command and writes the
// command's own peak RSS to a file. A child of this test process cannot
// report its own: os/exec starts it in this process's memory, and Linux
// carries this process's high-water mark into the child's ru_maxrss, so
// every child read as at least this process's peak, which grows as the
// tests run (a 200 MB parent: /bin/true read as 202 MB; through peakrss,
// 2.3 MB).
func peakRSSProgram(t testing.TB) string {
	return goProgram(t, "./testdata/peakrss", "peakrss")
}

// readPeakKiB reads what peakrss wrote: the command's peak RSS in KiB.
func readPeakKiB(t testing.TB, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the command's peak RSS: %v (peakrss wrote nothing)", err)
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("the command's peak RSS: %v", err)
	}
	return kib
}

// sessionID is the id of the stored session named name.
func sessionID(t *testing.T, store, name string) string {
	t.Helper()
	for _, s := range lsJSON(t, store) {
		if s.Name == name {
			return s.ID
		}
	}
	t.Fatalf("no session %q in %s", name, store)
	return ""
}

// TestPageCycleEndsEveryCommand is the audit's page cycle: a branch page
// of a session's frames whose first child is itself sent bbolt's cursor
// down for ever, its stack growing until the process died (show, export,
// check: out of a 1 GB address space in 1 to 3 s) or the machine's memory
// ran out, and record ingested into the damaged file. Now every command
// that opens the database walks its pages' shape first and ends with one
// line naming the page, in milliseconds and about 20 MB; record leaves the
// session in its spool and the file as it was.
func TestPageCycleEndsEveryCommand(t *testing.T) {
	t.Parallel()
	store, _ := damagedStore(t)
	id := sessionID(t, store, "s2") // 200 frames: its frames bucket has a branch page
	path := filepath.Join(store, "tapedeck.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	db.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket([]byte("frames")).Bucket([]byte(id)).Root())
		return nil
	})
	db.Close()
	bad, _ := os.ReadFile(path)
	if binary.LittleEndian.Uint16(bad[root*4096+8:]) != 0x01 {
		t.Fatalf("page %d is not a branch page", root)
	}
	binary.LittleEndian.PutUint64(bad[root*4096+16+8:], root) // its first child: itself
	os.WriteFile(path, bad, 0o600)
	want := fmt.Sprintf("page %d: referenced twice", root)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"ls"}, 1},
		{[]string{"ls", "--json"}, 1},
		{[]string{"show", id}, 1},
		{[]string{"export", id}, 1},
		{[]string{"check", id}, 2},
	} {
		r, took, rss := boundedTapedeck(t, store, 4096, 60*time.Second, nil, c.args...)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %.300q", c.args, r.code, c.code, r.stderr)
		}
		oneLine(t, r.stderr, "database damaged")
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("%s: stderr %.300q does not name the page", c.args, r.stderr)
		}
		t.Logf("%s: ended in %v, peak RSS %.0f MB", strings.Join(c.args, " "), took.Round(time.Millisecond), rss)
	}
	r, took, _ := boundedTapedeck(t, store, 4096, 60*time.Second, nil, "verify")
	if r.code != 1 || !strings.Contains(string(r.stdout), "damaged: "+want) {
		t.Errorf("verify: exit %d, stdout %q; want 1 and the page named", r.code, r.stdout)
	}
	t.Logf("verify: ended in %v", took.Round(time.Millisecond))
	argv, fenv := fixture("exit", "FIXTURE_CODE=6")
	r, took, _ = boundedTapedeck(t, store, 4096, 60*time.Second, fenv, append([]string{"record"}, argv...)...)
	if r.code != 6 {
		t.Errorf("record: exit %d, want the plugin's 6; stderr %q", r.code, r.stderr)
	}
	oneLine(t, r.stderr, want)
	t.Logf("record (its ingest): ended in %v", took.Round(time.Millisecond))
	if spools, _ := filepath.Glob(filepath.Join(store, "spool", "*.spool")); len(spools) != 1 {
		t.Errorf("spools %v: the session must stay in its spool", spools)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Error("a command changed the damaged database")
	}
}

// TestRecordKeepsAnEmptyDatabase is the audit's 0-byte database: record
// started it anew, silently. Now record says so in one line (what, where,
// what to do), the file stays 0 bytes and the session in its spool, where
// ls lists it; once the file is moved aside, the next command stores it.
func TestRecordKeepsAnEmptyDatabase(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	path := filepath.Join(store, "tapedeck.db")
	os.WriteFile(path, nil, 0o600)
	r := recordFixture(t, store, "exit", someLines(5, 10), "FIXTURE_CODE=6")
	if r.code != 6 {
		t.Fatalf("record: exit %d, want 6; stderr %q", r.code, r.stderr)
	}
	oneLine(t, r.stderr, "database file is empty (0 bytes): "+path)
	if !strings.Contains(string(r.stderr), "move it aside") {
		t.Errorf("stderr %q does not say what to do", r.stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the 0-byte database was written over (%v)", err)
	}
	spools, _ := filepath.Glob(filepath.Join(store, "spool", "*.spool"))
	if len(spools) != 1 {
		t.Fatalf("spools %v: the session must stay in its spool", spools)
	}
	r = tapedeck(t, store, nil, nil, "ls")
	if r.code != 0 || !strings.Contains(string(r.stdout), strings.TrimSuffix(filepath.Base(spools[0]), ".spool")) {
		t.Errorf("ls: exit %d, stdout %q: want the spooled session", r.code, r.stdout)
	}
	oneLine(t, r.stderr, "database file is empty (0 bytes)")
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatal("ls wrote over the 0-byte database")
	}
	os.Rename(path, path+".empty")
	if list := lsJSON(t, store); len(list) != 1 {
		t.Fatalf("after moving it aside: %d sessions, want 1", len(list))
	}
	if spools, _ := filepath.Glob(filepath.Join(store, "spool", "*.spool")); len(spools) != 0 {
		t.Errorf("the session was not ingested: %v", spools)
	}
}

// TestGCNamesADamagedFrame is the audit's gc: it copied a frame whose
// checksum does not match into the new file and exited 0. Now it names
// the session and the frame, changes nothing, and exits 1; the rest of the
// damage is for verify, which it names.
func TestGCNamesADamagedFrame(t *testing.T) {
	t.Parallel()
	store, _ := damagedStore(t)
	id := sessionID(t, store, "s0")
	path := filepath.Join(store, "tapedeck.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("frames")).Bucket([]byte(id))
		for _, seq := range []uint64{7, 9} {
			key := binary.BigEndian.AppendUint64(nil, seq)
			v := bytes.Clone(b.Get(key))
			v[len(v)-3] ^= 0x20 // a letter's case: still valid JSON
			if err := b.Put(key, v); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := os.ReadFile(path)
	r := tapedeck(t, store, nil, nil, "gc")
	if r.code != 1 {
		t.Errorf("gc: exit %d, want 1; stdout %q", r.code, r.stdout)
	}
	oneLine(t, r.stderr, "session "+id+" frame 7: checksum mismatch")
	if !strings.Contains(string(r.stderr), "nothing was changed") {
		t.Errorf("stderr %q does not say nothing was changed", r.stderr)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, bad) {
		t.Error("gc replaced the database")
	}
	// The advice for the rest, run as printed: it lists both.
	m := regexp.MustCompile(`, and 1 more \((tapedeck verify) lists them\)`).FindSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("stderr %q does not point at the rest", r.stderr)
	}
	cmd := exec.Command("sh", "-c", string(m[1]))
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(tapedeckBin)+string(os.PathListSeparator)+os.Getenv("PATH"), "TAPEDECK_STORE="+store)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "frame 7: checksum mismatch") || !strings.Contains(string(out), "frame 9: checksum mismatch") {
		t.Errorf("%s: %v, %q; want exit 1 and both frames", m[1], err, out)
	}
}

// TestLsAndShowSayWhatWasLost is the audit's full disk: a session that
// lost frames showed "complete" in ls and show. Now both say how many
// were lost (show also why), and ls --json has them.
func TestLsAndShowSayWhatWasLost(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	putSessions(t, store, 2, func(i int) (frame.Session, []frame.Frame) {
		m, frames := fakeSession(fmt.Sprintf("n%d", i), "p", time.Date(2025, 6, 1, 0, i, 0, 0, time.UTC))
		if i == 1 {
			m.Lost = &frame.Lost{Frames: 12, Bytes: 3400, Reason: "write spool: no space left on device"}
		}
		return m, frames
	})
	r := tapedeck(t, store, nil, nil, "ls")
	rows := strings.Split(strings.TrimSpace(string(r.stdout)), "\n")
	if r.code != 0 || len(rows) != 3 {
		t.Fatalf("ls: exit %d, %q", r.code, r.stdout)
	}
	if !strings.Contains(rows[1], "n1") || !strings.Contains(rows[1], "complete, 12 frames lost") {
		t.Errorf("ls: the session that lost frames reads %q", rows[1])
	}
	if strings.Contains(rows[2], "lost") {
		t.Errorf("ls: the session that lost nothing reads %q", rows[2])
	}
	r = tapedeck(t, store, nil, nil, "ls", "--json")
	var list []struct {
		Name, Status string
		Lost         *frame.Lost
	}
	if err := json.Unmarshal(r.stdout, &list); err != nil || len(list) != 2 {
		t.Fatalf("ls --json: %v %s", err, r.stdout)
	}
	if list[0].Lost == nil || list[0].Lost.Frames != 12 || list[1].Lost != nil {
		t.Errorf("ls --json: %+v", list)
	}
	r = tapedeck(t, store, nil, nil, "show", "n1")
	head := strings.SplitN(string(r.stdout), "\n", 3)
	if r.code != 0 || len(head) < 3 || !strings.Contains(head[0], "complete, 12 frames lost") ||
		head[1] != "lost         12 frames, 3400 bytes, not recorded: write spool: no space left on device" {
		t.Errorf("show: exit %d, header %q", r.code, head)
	}
}

// TestReadOnlyStore is the audit's read-only store: ls, show and export
// could not read it at all (the lock file could not be opened for
// writing), and verify called it damaged (exit 1). Now they read it, with
// its lock file or without one, spooled sessions included; a database
// verify cannot read is exit 2 with the reason.
func TestReadOnlyStore(t *testing.T) {
	t.Parallel()
	for _, withLock := range []bool{true, false} {
		t.Run(fmt.Sprintf("lock file %v", withLock), func(t *testing.T) {
			store := t.TempDir()
			mountTmpfs(t, store, "8m")
			putSessions(t, store, 2, func(i int) (frame.Session, []frame.Frame) {
				return fakeSession(fmt.Sprintf("r%d", i), "p", time.Date(2025, 6, 1, 0, i, 0, 0, time.UTC))
			})
			want, _ := exported(t, store, "r1")
			if !withLock {
				os.Remove(filepath.Join(store, "tapedeck.lock"))
			}
			if out, err := exec.Command("mount", "-o", "remount,ro", store).CombinedOutput(); err != nil {
				t.Skipf("cannot remount read-only: %v %s", err, out)
			}
			for _, c := range [][]string{{"ls"}, {"ls", "--json"}, {"show", "r1"}, {"export", "r1"}, {"verify"}} {
				r := tapedeck(t, store, nil, nil, c...)
				if r.code != 0 || len(r.stderr) > 0 {
					t.Errorf("%s on a read-only store: exit %d, stderr %q", c, r.code, r.stderr)
				}
			}
			if got, _ := exported(t, store, "r1"); got.ID != want.ID {
				t.Errorf("export read %s, want %s", got.ID, want.ID)
			}
			r := tapedeck(t, store, nil, nil, "gc")
			if r.code != 1 {
				t.Errorf("gc on a read-only store: exit %d, want 1", r.code)
			}
			oneLine(t, r.stderr, "read-only file system")
		})
	}
	t.Run("unreadable database", func(t *testing.T) {
		store := t.TempDir()
		os.Mkdir(filepath.Join(store, "tapedeck.db"), 0o700) // a folder where the file should be: nobody can read it as one
		r := tapedeck(t, store, nil, nil, "verify")
		if r.code != 2 {
			t.Errorf("verify: exit %d, want 2 (it could not run); stdout %q", r.code, r.stdout)
		}
		oneLine(t, r.stderr, "verify: cannot read "+filepath.Join(store, "tapedeck.db"))
		if strings.Contains(string(r.stdout), "damaged") {
			t.Errorf("verify called it damaged: %q", r.stdout)
		}
	})
}

// TestStoreFolderOthersCanWrite is the audit's shared store: with no
// $HOME the store went to one folder in the temporary folder for every
// user, and a 0777 folder there was used. Now the default without $HOME
// is the user's own (tapedeck-UID, made 0700), and a store folder that
// others can write, or that another user owns, is refused in one line
// that says what to do; doing it makes the store usable.
func TestStoreFolderOthersCanWrite(t *testing.T) {
	t.Parallel()
	t.Run("writable by others", func(t *testing.T) {
		// A space and a quote in the path, as in macOS's default store
		// (~/Library/Application Support/tapedeck): the advice still runs
		// as printed.
		store := filepath.Join(t.TempDir(), "Application Support's")
		if err := os.Mkdir(store, 0o700); err != nil {
			t.Fatal(err)
		}
		putSessions(t, store, 1, func(i int) (frame.Session, []frame.Frame) {
			return fakeSession("w", "p", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
		})
		os.Chmod(store, 0o777)
		var advice []byte
		for _, c := range [][]string{{"ls"}, {"show", "last"}, {"export", "last"}, {"verify"}} {
			r := tapedeck(t, store, nil, nil, c...)
			if r.code == 0 {
				t.Errorf("%s: exit 0 on a store folder anyone can write", c)
			}
			oneLine(t, r.stderr, fmt.Sprintf("unsafe store folder: %s can be written by others (mode 0777)", store))
			advice = r.stderr
		}
		r := recordFixture(t, store, "exit", someLines(3, 5), "FIXTURE_CODE=4")
		if r.code != 4 {
			t.Errorf("record: exit %d, want the plugin's 4", r.code)
		}
		oneLine(t, r.stderr, "cannot record (unsafe store folder: ")
		if spools, _ := filepath.Glob(filepath.Join(store, "spool", "*.spool")); len(spools) != 0 {
			t.Errorf("record wrote into the folder: %v", spools)
		}
		// What the line says to do, run as printed.
		m := regexp.MustCompile(`make it yours alone \((chmod go-w [^)]*)\)`).FindSubmatch(advice)
		if m == nil {
			t.Fatalf("no advice in %q", advice)
		}
		if out, err := exec.Command("sh", "-c", string(m[1])).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", m[1], err, out)
		}
		if list := lsJSON(t, store); len(list) != 1 {
			t.Errorf("after chmod go-w: %d sessions, want 1", len(list))
		}
	})
	t.Run("spool folder writable by others", func(t *testing.T) {
		store := t.TempDir()
		os.Mkdir(filepath.Join(store, "spool"), 0o700)
		os.Chmod(filepath.Join(store, "spool"), 0o733)
		r := tapedeck(t, store, nil, nil, "ls")
		if r.code != 1 {
			t.Errorf("ls: exit %d, want 1", r.code)
		}
		oneLine(t, r.stderr, "unsafe store folder: "+filepath.Join(store, "spool")+" can be written by others (mode 0733)")
	})
	t.Run("owned by another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("giving a folder to another user needs root")
		}
		store := t.TempDir()
		putSessions(t, store, 1, func(i int) (frame.Session, []frame.Frame) {
			return fakeSession("o", "p", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
		})
		if err := os.Chown(store, 65534, 65534); err != nil {
			t.Skipf("chown: %v", err)
		}
		r := tapedeck(t, store, nil, nil, "ls")
		if r.code != 1 {
			t.Errorf("ls: exit %d, want 1", r.code)
		}
		oneLine(t, r.stderr, fmt.Sprintf("unsafe store folder: %s belongs to user 65534, not to you (user 0)", store))
	})
	t.Run("no HOME", func(t *testing.T) {
		tmp := t.TempDir()
		var env []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if k != "HOME" && k != "XDG_DATA_HOME" && k != "TAPEDECK_STORE" && k != "TMPDIR" {
				env = append(env, kv)
			}
		}
		env = append(env, "TMPDIR="+tmp)
		argv, fenv := fixture("exit", "FIXTURE_CODE=0")
		cmd := exec.Command(tapedeckBin, append([]string{"record"}, argv...)...)
		cmd.Env = append(env, fenv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("record without HOME: %v %s", err, out)
		}
		own := filepath.Join(tmp, fmt.Sprintf("tapedeck-%d", os.Geteuid()))
		fi, err := os.Stat(own)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("the store without HOME: %v, %v; want %s, 0700", fi, err, own)
		}
		if _, err := os.Stat(filepath.Join(tmp, "tapedeck")); err == nil {
			t.Error("the shared folder was used")
		}
		os.Chmod(own, 0o777) // as if someone else had made it for everyone
		cmd = exec.Command(tapedeckBin, "ls")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "unsafe store folder: "+own) {
			t.Errorf("ls without HOME on a 0777 folder: %v %q", err, out)
		}
	})
}

package child

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// NewGroup sets attr so that the child starts in a process group of its
// own, which EndGroup ends. It also makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER): what the child leaves behind, a process that
// left its group with setsid(2) included, is re-parented to this process
// instead of init, where EndGroup finds it. The subreaper is the
// process's for its life: every process started after it is re-parented
// to this one when its parent ends, which only EndGroup reaps.
func NewGroup(attr *syscall.SysProcAttr) {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	attr.Setpgid = true
}

// EndGroup kills what is left of the process group of pid (a child started
// with NewGroup at started), and then its descendants that left the group
// and were re-parented to this process: each child of ours other than pid
// that is in its group, or that leads a session of its own without a
// terminal (a setsid(2) child: a process we started ourselves is in our
// session, or has a terminal) and started after pid, and what those
// started in their sessions. Each is killed and reaped, until none is
// left. It returns the pids that did not go (SIGKILL refused). It is safe
// to call after pid has exited and been waited for.
func EndGroup(pid int, started time.Time) (survivors []int) {
	syscall.Kill(-pid, syscall.SIGKILL)
	if noChildren() {
		return nil // nothing was re-parented to us: no /proc to read
	}
	self := os.Getpid()
	var since uint64           // read when needed
	sessions := map[int]bool{} // of the setsid children killed
	tried := map[int]bool{}
	for range 64 { // rounds: a killed process's children come to us next
		found := false
		for _, p := range children(self, pid) {
			if since == 0 {
				since = bootTicks(started)
			}
			ours := p.pgrp == pid || sessions[p.session] ||
				p.session == p.pid && p.tty == 0 && p.start >= since
			if !ours || tried[p.pid] {
				continue
			}
			found, tried[p.pid] = true, true
			if p.session == p.pid {
				sessions[p.pid] = true
			}
			if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
				survivors = append(survivors, p.pid)
				continue
			}
			var ws syscall.WaitStatus
			syscall.Wait4(p.pid, &ws, 0, nil)
		}
		if !found {
			break
		}
	}
	return survivors
}

// noChildren reports whether this process has no child at all, running
// or exited (waitid(P_ALL) finds none; WNOWAIT leaves a child that exited
// to its own waiter).
func noChildren() bool {
	const (
		pAll    = 0
		wExited = 4
		wNoHang = 1
		wNoWait = 0x1000000
	)
	var info [128]byte // a siginfo_t
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(&info[0])), wExited|wNoHang|wNoWait, 0, 0)
	return errno == syscall.ECHILD
}

// proc is what EndGroup reads of a process in /proc/PID/stat.
type proc struct {
	pid, ppid, pgrp, session, tty int
	start                         uint64 // clock ticks since boot
}

// children lists the processes other than skip whose parent is ppid, this
// process: from the children file of its main thread, else from every
// process in /proc. An orphan is re-parented to the subreaper's first
// live thread, and that is the main one: the Go runtime never ends it
// before the process. The other threads' children are the children that
// others running beside this one started (each from the thread it holds
// for its child's life, see Start), so they need not be read: at -j 3
// reading every thread's file was a fifth of tapedeck's CPU a replay.
func children(ppid, skip int) []proc {
	var buf [4096]byte
	var pids []int
	b, err := readSmall("/proc/self/task/"+strconv.Itoa(ppid)+"/children", buf[:])
	if err == nil {
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil && pid != skip {
				pids = append(pids, pid)
			}
		}
	} else {
		// Not there (a kernel without CONFIG_PROC_CHILDREN): scan every
		// process.
		names, _ := readDirNames("/proc")
		for _, name := range names {
			if pid, err := strconv.Atoi(name); err == nil && pid != skip {
				pids = append(pids, pid)
			}
		}
	}
	var out []proc
	for _, pid := range pids {
		p, ok := readStat(pid, buf[:])
		if ok && p.ppid == ppid {
			out = append(out, p)
		}
	}
	return out
}

// readStat reads what EndGroup needs of /proc/PID/stat, with buf.
func readStat(pid int, buf []byte) (proc, bool) {
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf)
	if err != nil {
		return proc{}, false
	}
	// pid (comm) state ppid pgrp session tty_nr … starttime (field 22)
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return proc{}, false
	}
	p := proc{pid: pid}
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgrp, _ = strconv.Atoi(string(f[2]))
	p.session, _ = strconv.Atoi(string(f[3]))
	p.tty, _ = strconv.Atoi(string(f[4]))
	p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return p, true
}

// readSmall reads a small file of /proc into buf: one open, one read.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, buf)
	if err != nil {
		return nil, err
	}
	return buf[:max(n, 0)], nil
}

// readDirNames lists a folder's names.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// bootTicks is t in clock ticks since boot (the unit of a process's start
// time in /proc), rounded down, a tick early: 0 when it cannot be read.
func bootTicks(t time.Time) uint64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil {
		return 0
	}
	const hz = 100 // USER_HZ, 100 on every Linux ABI Go supports
	at := up - time.Since(t).Seconds()
	if at*hz < 1 {
		return 0
	}
	return uint64(at*hz) - 1
}

package child

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxFamily bounds how many processes Holding looks at: a child that
// forks without end costs it no more.
const maxFamily = 256

// Writing lists the files under folder dir (an absolute, clean path)
// that process pid or one of its descendants holds open for writing, by
// their paths as /proc shows them (a file open only for reading, as a
// shell holds its script, is not listed). It reads /proc at the moment
// of the call: a file opened, written and closed before it is not seen.
// A file several of them hold is listed once. It is nil outside Linux, and for a process that has gone.
func Writing(pid int, dir string) []string {
	var out []string
	var buf [512]byte
	prefix := dir + string(filepath.Separator)
	for _, p := range family(pid) {
		proc := "/proc/" + strconv.Itoa(p)
		names, err := readDirNames(proc + "/fd")
		if err != nil {
			continue
		}
		for _, n := range names {
			target, err := os.Readlink(proc + "/fd/" + n)
			if err == nil && strings.HasPrefix(target, prefix) && !slices.Contains(out, target) && writable(proc+"/fdinfo/"+n, buf[:]) {
				out = append(out, target)
			}
		}
	}
	return out
}

// writable says whether the descriptor whose /proc fdinfo file is path was
// opened for writing (its flags, in octal, hold O_WRONLY or O_RDWR).
func writable(path string, buf []byte) bool {
	b, err := readSmall(path, buf)
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("flags:")); ok {
			flags, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 64)
			return err == nil && flags&3 != 0
		}
	}
	return false
}

// family is pid and its descendants (at most maxFamily), from the
// children files of each one's threads.
func family(pid int) []int {
	var buf [4096]byte
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < maxFamily; i++ {
		tasks, err := readDirNames("/proc/" + strconv.Itoa(out[i]) + "/task")
		if err != nil {
			continue
		}
		for _, tid := range tasks {
			b, err := readSmall("/proc/"+strconv.Itoa(out[i])+"/task/"+tid+"/children", buf[:])
			if err != nil {
				continue
			}
			for _, f := range bytes.Fields(b) {
				if c, err := strconv.Atoi(string(f)); err == nil && len(out) < maxFamily {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

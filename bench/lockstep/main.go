// Command lockstep is the minimal replayer that `tapedeck replay` is measured
// against: it decodes a tape, starts the plugin, and walks the frames in
// order, sending each host frame and reading a line from the plugin for
// each recorded plugin frame, which it compares with the recording (bytes,
// then JSON values). No matching by id, no answering the plugin's
// requests, no timeouts, no diff: the least work a lockstep replay does.
// Standard library only. Exit 0 same, 1 differs, 2 could not run.
//
// Usage: lockstep TAPE -- COMMAND [ARGS…]
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
)

// line is one tape line: the header or a frame.
type line struct {
	Dir   string          `json:"dir"`
	Event string          `json:"event"`
	JSON  json.RawMessage `json:"json"`
	Text  *string         `json:"text"`
	B64   *string         `json:"b64"`
	EOL   *bool           `json:"eol"`
}

func (l *line) raw() ([]byte, error) {
	switch {
	case l.JSON != nil:
		return l.JSON, nil
	case l.Text != nil:
		return []byte(*l.Text), nil
	case l.B64 != nil:
		return base64.StdEncoding.DecodeString(*l.B64)
	}
	return nil, nil
}

func main() {
	if len(os.Args) < 4 || os.Args[2] != "--" {
		fmt.Fprintln(os.Stderr, "usage: lockstep TAPE -- COMMAND [ARGS…]")
		os.Exit(2)
	}
	code, err := run(os.Args[1], os.Args[3:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockstep:", err)
	}
	os.Exit(code)
}

func run(path string, argv []string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 2, err
	}
	defer f.Close()
	tape := bufio.NewReaderSize(f, 64<<10)
	if _, err := tape.ReadBytes('\n'); err != nil { // the header
		return 2, fmt.Errorf("read %s: %w", path, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 2, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 2, err
	}
	if err := cmd.Start(); err != nil {
		return 2, err
	}
	in := bufio.NewWriterSize(stdin, 64<<10)
	out := bufio.NewReaderSize(stdout, 64<<10)
	differ := 0
	for n := 1; ; n++ {
		b, err := tape.ReadBytes('\n')
		if err == io.EOF && len(b) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return 2, err
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return 2, fmt.Errorf("tape line %d: %w", n+1, err)
		}
		if l.Event == "eof" {
			in.Flush()
			stdin.Close()
			continue
		}
		if l.Event != "" || l.Dir == "err" {
			continue
		}
		raw, err := l.raw()
		if err != nil {
			return 2, fmt.Errorf("tape line %d: %w", n+1, err)
		}
		switch l.Dir {
		case "in":
			in.Write(raw)
			if l.EOL == nil || *l.EOL {
				in.WriteByte('\n')
			}
			if err := in.Flush(); err != nil {
				return 2, fmt.Errorf("send frame of tape line %d: %w", n+1, err)
			}
		case "out":
			got, err := out.ReadBytes('\n')
			if err != nil && len(got) == 0 {
				return 2, fmt.Errorf("the plugin ended before tape line %d: %w", n+1, err)
			}
			if !same(bytes.TrimSuffix(got, []byte("\n")), raw) {
				differ++
			}
		}
	}
	in.Flush()
	stdin.Close()
	io.Copy(io.Discard, out)
	cmd.Wait()
	if differ > 0 {
		fmt.Fprintf(os.Stderr, "lockstep: %d frames differ\n", differ)
		return 1, nil
	}
	return 0, nil
}

// same compares a live line with a recorded one: as bytes, else as JSON
// values.
func same(got, want []byte) bool {
	if bytes.Equal(got, want) {
		return true
	}
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal(want, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

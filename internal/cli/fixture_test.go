package cli

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The test binary doubles as the nasty fixture plugins: with
// TAPEDECK_FIXTURE set, TestMain runs one of these instead of the tests.
// Each mode is a plugin behaviour that the shim must survive.
var fixtures = map[string]func() int{
	// echo copies stdin to stdout byte for byte.
	"echo": func() int {
		io.Copy(os.Stdout, os.Stdin)
		return 0
	},
	// randomkey answers the first line with a result whose member is named
	// by a random id, new at every run, then reads stdin to its end.
	"randomkey": func() int {
		br := bufio.NewReader(os.Stdin)
		br.ReadBytes('\n')
		var b [6]byte
		rand.Read(b[:])
		fmt.Printf(`{"jsonrpc":"2.0","id":1,"result":{"items":{"k%x":{"at":1}}}}`+"\n", b)
		io.Copy(io.Discard, br)
		return 0
	},
	// shortkeys is randomkey with three members named by short random
	// names ("k1021"), which look like any member's.
	"shortkeys": func() int {
		br := bufio.NewReader(os.Stdin)
		br.ReadBytes('\n')
		var b [6]byte
		rand.Read(b[:])
		fmt.Printf(`{"jsonrpc":"2.0","id":1,"result":{"items":{"k%d":1,"k%d":2,"k%d":3}}}`+"\n", int(b[0])<<8|int(b[1]), int(b[2])<<8|int(b[3]), int(b[4])<<8|int(b[5]))
		io.Copy(io.Discard, br)
		return 0
	},
	// tee copies stdin to stdout and to stderr.
	"tee": func() int {
		io.Copy(io.MultiWriter(os.Stdout, os.Stderr), os.Stdin)
		return 0
	},
	// exit exits at once with FIXTURE_CODE, without reading stdin.
	"exit": func() int {
		n, _ := strconv.Atoi(os.Getenv("FIXTURE_CODE"))
		return n
	},
	// segv kills itself with SIGSEGV after echoing one line.
	"segv": func() int {
		br := bufio.NewReader(os.Stdin)
		line, _ := br.ReadBytes('\n')
		os.Stdout.Write(line)
		// The Go runtime owns SIGSEGV; a shell dies of it plainly.
		syscall.Exec("/bin/sh", []string{"sh", "-c", "kill -SEGV $$"}, os.Environ())
		return 99
	},
	// stubborn ignores SIGTERM, SIGINT, SIGHUP and stdin EOF; it prints its
	// pid and then "ready", and sleeps forever.
	"stubborn": func() int {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		fmt.Printf("%d\nready\n", os.Getpid())
		io.Copy(io.Discard, os.Stdin)
		return blockForever()
	},
	// signals prints "ready", then a line per SIGTERM/SIGINT/SIGHUP it gets;
	// it exits 0 on stdin EOF.
	"signals": func() int {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		fmt.Println("ready")
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
		for {
			select {
			case s := <-ch:
				fmt.Printf("got %d\n", s.(syscall.Signal))
			case <-done:
				return 0
			}
		}
	},
	// closeout writes one line, closes stdout, then reads stdin to EOF and
	// exits 7.
	"closeout": func() int {
		fmt.Println(`{"jsonrpc":"2.0","method":"bye"}`)
		os.Stdout.Close()
		io.Copy(io.Discard, os.Stdin)
		return 7
	},
	// grandchild starts a child of its own that keeps stdout open (and
	// prints its pid), writes a line and exits 5.
	"grandchild": func() int {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "TAPEDECK_FIXTURE=sleeper")
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			return 99
		}
		fmt.Fprintf(os.Stderr, "grandchild %d\n", cmd.Process.Pid)
		fmt.Println(`{"jsonrpc":"2.0","method":"last"}`)
		return 5
	},
	// sleeper blocks until killed.
	"sleeper": func() int { return blockForever() },
	// early reads one line, answers it and exits 4 while the host keeps writing.
	"early": func() int {
		br := bufio.NewReader(os.Stdin)
		line, _ := br.ReadBytes('\n')
		os.Stdout.Write(line)
		return 4
	},
	// journal echoes every line and appends it to FIXTURE_JOURNAL first, one
	// write per line, so a test knows what the plugin received.
	"journal": func() int {
		j, err := os.OpenFile(os.Getenv("FIXTURE_JOURNAL"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return 98
		}
		br := bufio.NewReader(os.Stdin)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				j.Write(line)
				os.Stdout.Write(line)
			}
			if err != nil {
				return 0
			}
		}
	},
}

func init() {
	// holddb opens the bbolt database FIXTURE_DB read-write, which holds its
	// lock, says "locked", and keeps it until stdin closes.
	fixtures["holddb"] = func() int {
		db, err := bolt.Open(os.Getenv("FIXTURE_DB"), 0o600, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 97
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		db.Close()
		return 0
	}
}

// blockForever blocks until the process is killed. (A bare select{} would
// end in the runtime's deadlock error once no other goroutine runs.)
func blockForever() int {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR2)
	for {
		<-ch
	}
}

// mini is a small real plugin with knobs for the replay tests:
// FIXTURE_LABEL changes a label, FIXTURE_DROP drops a notification,
// FIXTURE_EXTRA adds one, FIXTURE_SWAP swaps two, FIXTURE_CRASH exits 3 on
// the first ui/event, FIXTURE_HANG stops reading and writing on it (and
// with FIXTURE_HANG_CHILD starts a grandchild that outlives it, printing its
// pid on stderr), FIXTURE_NOISE puts a value that differs on every run into
// a frame, FIXTURE_CLOCK adds a panel text that differs on every run,
// FIXTURE_WHEN adds a panel text of its value, FIXTURE_SECRET shows its
// value in the panel and logs it on stderr, FIXTURE_REVERSE makes its two
// requests in the other order, FIXTURE_SEQUENTIAL makes the second only
// once the first is answered.
func mini() int {
	label := os.Getenv("FIXTURE_LABEL")
	if label == "" {
		label = "Hello"
	}
	knob := func(k string) bool { return os.Getenv(k) != "" }
	out := func(s string) { os.Stdout.WriteString(s + "\n") }
	notify := func(msg string) {
		b, _ := json.Marshal(msg)
		out(`{"jsonrpc":"2.0","method":"ui/notify","params":{"message":` + string(b) + `,"kind":"info"}}`)
	}
	pending := map[string]string{} // our request id → method
	var then func()                // what to do once the next answer came
	next := 0
	request := func(method, params string) {
		next++
		id := strconv.Itoa(next)
		pending[id] = method
		out(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	}
	br := bufio.NewReader(os.Stdin)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Params struct {
				Element string `json:"element"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			out(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		case m.Method == "panel/open":
			children := `{"type":"text","text":"` + label + `"}`
			if knob("FIXTURE_CLOCK") {
				children += fmt.Sprintf(`,{"type":"text","text":"%d"}`, time.Now().UnixNano())
			}
			if v := os.Getenv("FIXTURE_WHEN"); v != "" {
				b, _ := json.Marshal(v)
				children += `,{"type":"text","text":` + string(b) + `}`
			}
			if v := os.Getenv("FIXTURE_SECRET"); v != "" {
				fmt.Fprintf(os.Stderr, "mini: using token %s\n", v)
				children += `,{"type":"text","text":"token ` + v + `"}`
			}
			request("ui/setPanel", `{"tree":{"type":"column","children":[`+children+`,{"type":"button","id":"go","label":"Go"}]}}`)
		case m.Method == "ui/event" && knob("FIXTURE_CRASH"):
			fmt.Fprintln(os.Stderr, "mini: crashing")
			return 3
		case m.Method == "ui/event" && knob("FIXTURE_HANG"):
			if knob("FIXTURE_HANG_CHILD") {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), "TAPEDECK_FIXTURE=sleeper")
				if cmd.Start() == nil {
					fmt.Fprintf(os.Stderr, "grandchild %d\n", cmd.Process.Pid)
				}
			}
			fmt.Fprintln(os.Stderr, "mini: hanging")
			return blockForever()
		case m.Method == "ui/event" && m.Params.Element == "go":
			badge := `{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"1"}}`
			if knob("FIXTURE_NOISE") { // a value that differs on every run
				badge = fmt.Sprintf(`{"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"1","nonce":%d}}`, time.Now().UnixNano())
			}
			switch {
			case knob("FIXTURE_SWAP"):
				out(badge)
				notify("clicked")
			case knob("FIXTURE_DROP"):
				out(badge)
			default:
				notify("clicked")
				out(badge)
			}
			if knob("FIXTURE_EXTRA") {
				notify("extra")
			}
		case m.Method == "ui/event" && m.Params.Element == "both" && knob("FIXTURE_SEQUENTIAL"):
			request("terminal/send", `{"text":"ls","submit":true}`)
			then = func() { request("prompt/inject", `{"text":"hi"}`) }
		case m.Method == "ui/event" && m.Params.Element == "both" && knob("FIXTURE_REVERSE"):
			request("terminal/send", `{"text":"ls","submit":true}`)
			request("prompt/inject", `{"text":"hi"}`)
		case m.Method == "ui/event" && m.Params.Element == "both":
			request("prompt/inject", `{"text":"hi"}`)
			request("terminal/send", `{"text":"ls","submit":true}`)
		case m.Method == "shutdown":
			return 0
		case m.Method == "" && len(m.ID) > 0:
			if method := pending[string(m.ID)]; method != "ui/setPanel" && method != "" {
				notify(method + " answered: " + string(m.Result))
			}
			delete(pending, string(m.ID))
			if after := then; after != nil {
				then = nil
				after()
			}
		}
	}
}

func init() { fixtures["mini"] = mini }

func init() {
	// envdump says, for every line it reads, what its environment holds of
	// the variables a hostile tape could try to set.
	fixtures["envdump"] = func() int {
		br := bufio.NewReader(os.Stdin)
		for {
			if _, err := br.ReadBytes('\n'); err != nil {
				return 0
			}
			b, _ := json.Marshal(map[string]string{
				"path":     os.Getenv("PATH"),
				"node":     os.Getenv("NODE_OPTIONS"),
				"preload":  os.Getenv("LD_PRELOAD"),
				"pluginId": os.Getenv("AGENTTY_PLUGIN_ID"),
			})
			fmt.Printf(`{"jsonrpc":"2.0","method":"env","params":%s}`+"\n", b)
		}
	}
}

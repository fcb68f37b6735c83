package playground

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// BrowserCommand is the command that opens a URL in the person's
// browser: $BROWSER (its first entry; %s stands for the URL, which is
// added at the end otherwise), else open on macOS and xdg-open elsewhere.
// getenv reads the environment.
func BrowserCommand(getenv func(string) string) []string {
	if b := getenv("BROWSER"); b != "" {
		first, _, _ := strings.Cut(b, ":")
		if f := strings.Fields(first); len(f) > 0 {
			return f
		}
	}
	if runtime.GOOS == "darwin" {
		return []string{"open"}
	}
	return []string{"xdg-open"}
}

// opener starts argv with the URL (for %s, or at the end), and waits for
// it in a goroutine that Run waits for a little at its end (a $BROWSER
// that stays until the browser closes is left running).
func (s *server) opener(argv []string) func(url string) error {
	return func(url string) error {
		args := append([]string(nil), argv[1:]...)
		put := false
		for i, a := range args {
			if strings.Contains(a, "%s") {
				args[i], put = strings.ReplaceAll(a, "%s", url), true
			}
		}
		if !put {
			args = append(args, url)
		}
		cmd := exec.Command(argv[0], args...)
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
		s.openers.Add(1)
		go func() {
			defer s.openers.Done()
			if err := cmd.Wait(); err != nil {
				fmt.Fprintf(s.opt.Log, "tapedeck: %s: %v\n", argv[0], err)
			}
		}()
		return nil
	}
}

package playback_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tapedeck/tapedeck/playback"
)

// Replay a golden tape from Go code, as a plugin's own `go test` can: the
// bundled hello-go tape runs its plugin with `go run .` in the plugin's
// folder. With the plugin as recorded the replay is the same; with its
// panel title changed (FIXTURE_LABEL) the differences say where.
func Example() {
	rec, err := playback.ReadTape("../testdata/tapes/hello-go.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	o := playback.Replay(context.Background(), rec, nil)
	if o.Err != nil {
		fmt.Println("could not replay:", o.Err)
		return
	}
	fmt.Println("as recorded, same:", o.Same())

	changed := playback.Replay(context.Background(), rec, &playback.Options{
		Env: append(os.Environ(), "FIXTURE_LABEL=Howdy"),
	})
	fmt.Println("changed, same:", changed.Same())
	for _, d := range changed.Diff.Differences {
		for _, c := range d.Changes {
			fmt.Printf("%s %s %s: %s → %s\n", d.Kind, d.Method, c.Path, c.Old, c.New)
		}
	}
	// Output:
	// as recorded, same: true
	// changed, same: false
	// changed ui/setPanel params.tree.children[0].text: "Hello" → "Howdy"
	// changed ui/setPanel params.tree.children[0].text: "Hello" → "Howdy"
}

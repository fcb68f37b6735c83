package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/check"
	"github.com/tapedeck/tapedeck/cli/internal/escape"
	"github.com/tapedeck/tapedeck/coverage"
)

func (e *env) coverageCommand() *cli.Command {
	return &cli.Command{
		Name:      "coverage",
		Usage:     "what the golden tapes exercise of each plugin, and what they leave untested",
		ArgsUsage: "[PATH…]",
		Description: "Reads every tape under the paths (default testdata/) and each plugin's\n" +
			"manifest (agentty-plugin.json in the tape's working directory) and prints,\n" +
			"per plugin: the host methods sent and the plugin methods seen, the UI\n" +
			"element types drawn, the interactive element ids that received a ui/event\n" +
			"of those drawn, the contributed commands no tape runs, and the error paths\n" +
			"taken. --min PERCENT exits 1 when a plugin's share of contributed commands\n" +
			"and drawn interactive ids exercised is lower.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON array of plugins"},
			&cli.Float64Flag{Name: "min", Usage: "exit 1 when a plugin's coverage is below `PERCENT`"},
		},
		Action: e.coverage,
	}
}

func (e *env) coverage(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		paths = []string{"testdata"}
	}
	tapes, err := findTapes(paths)
	if err != nil {
		return fail(2, "coverage: %v", err)
	}
	if len(tapes) == 0 {
		return fail(2, "coverage: no tapes under %s (a tape is a .jsonl file from tapedeck export)", strings.Join(paths, ", "))
	}
	plugins := map[string]*coverage.Plugin{}
	manifests := map[string]bool{}
	for _, t := range tapes {
		src, err := readTapeFile(t)
		if err != nil {
			return fail(2, "coverage: %v", err)
		}
		id, manifest, data, err := tapeManifest(src)
		if err != nil {
			return fail(2, "coverage: %v", err)
		}
		p := plugins[id]
		if p == nil {
			p = coverage.New(id)
			plugins[id] = p
		}
		if manifest != "" && !manifests[manifest] {
			manifests[manifest] = true
			if err := p.AddManifest(manifest, data); err != nil {
				return fail(2, "coverage: %v", err)
			}
		}
		p.AddTape(t, src.frames)
	}
	ids := make([]string, 0, len(plugins))
	for id, p := range plugins {
		p.Finish()
		ids = append(ids, id)
	}
	sort.Strings(ids)
	list := make([]*coverage.Plugin, len(ids))
	for i, id := range ids {
		list[i] = plugins[id]
	}
	if c.Bool("json") {
		js, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return err
		}
		if _, err := e.stdout.Write(append(escape.JSON(nil, js), '\n')); err != nil {
			return err
		}
	} else {
		for i, p := range list {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			e.printCoverage(p)
		}
	}
	if c.IsSet("min") {
		min := c.Float64("min")
		var below []string
		for _, p := range list {
			if p.Percent() < min {
				below = append(below, fmt.Sprintf("%s %.0f%%", p.ID, p.Percent()))
			}
		}
		if len(below) > 0 {
			return fail(1, "coverage below --min %g%%: %s", min, strings.Join(below, ", "))
		}
	}
	return nil
}

// tapeManifest finds the manifest of a tape's plugin: agentty-plugin.json
// in its working directory (a relative one is the tape folder's). The
// plugin's id is the manifest's, else the one initialize named, else the
// tape's file name.
func tapeManifest(src *source) (id, path string, data []byte, err error) {
	dir := src.meta.Cwd
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(src.tapePath), dir)
	}
	if dir != "" {
		path = filepath.Join(dir, check.ManifestFile)
		data, err = os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			path, err = "", nil
		case err != nil:
			return "", "", nil, fmt.Errorf("%s: %w", path, err)
		default:
			if id, err = coverage.ManifestID(data); err != nil {
				return "", "", nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	if id == "" {
		id = src.meta.Plugin.ID
	}
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(src.tapePath), ".jsonl")
	}
	return id, path, data, nil
}

func (e *env) printCoverage(p *coverage.Plugin) {
	w := e.stdout
	where := "no manifest found"
	if p.Manifest != "" {
		where = "manifest " + p.Manifest
	}
	fmt.Fprintf(w, "%s  (%s: %s; %s)\n", escape.Text(p.ID), nounCount(int64(len(p.Tapes)), "tape", "tapes"), escape.Text(strings.Join(p.Tapes, ", ")), escape.Text(where))
	fmt.Fprintf(w, "  host sent       %s\n", counts(p.HostMethods))
	fmt.Fprintf(w, "  plugin sent     %s\n", counts(p.PluginMethods))
	fmt.Fprintf(w, "  UI drawn        %s\n", counts(p.Elements))
	var drawn, used int
	var got, never, undrawn []string
	for _, el := range p.Interactive {
		switch {
		case el.Type == "":
			undrawn = append(undrawn, fmt.Sprintf("%s %d", el.ID, el.Events))
		case el.Events > 0:
			drawn++
			used++
			got = append(got, fmt.Sprintf("%s %d", el.ID, el.Events))
		default:
			drawn++
			never = append(never, el.ID+" ("+el.Type+")")
		}
	}
	line := fmt.Sprintf("%d of %d ids drawn got a ui/event", used, drawn)
	if len(got) > 0 {
		line += ": " + strings.Join(got, ", ")
	}
	if len(never) > 0 {
		line += "; never: " + strings.Join(never, ", ")
	}
	if len(undrawn) > 0 {
		line += "; events on ids no tape drew: " + strings.Join(undrawn, ", ")
	}
	fmt.Fprintf(w, "  interactive     %s\n", escape.Text(line))
	var contributed, run int
	var notRun, extra []string
	for _, cmd := range p.Commands {
		switch {
		case !cmd.Contributed:
			extra = append(extra, fmt.Sprintf("%s %d", cmd.ID, cmd.Runs))
		case cmd.Runs > 0:
			contributed++
			run++
		default:
			contributed++
			notRun = append(notRun, cmd.ID)
		}
	}
	line = fmt.Sprintf("%d of %d contributed run", run, contributed)
	if len(notRun) > 0 {
		line += "; never run: " + strings.Join(notRun, ", ")
	}
	if len(extra) > 0 {
		line += "; run but not contributed: " + strings.Join(extra, ", ")
	}
	fmt.Fprintf(w, "  commands        %s\n", escape.Text(line))
	if len(p.HostErrors)+len(p.PluginErrors) == 0 {
		fmt.Fprintf(w, "  error paths     none taken (no host error answer, no plugin error reply)\n")
	} else {
		fmt.Fprintf(w, "  error paths     host error answers: %s; plugin error replies: %s\n", counts(p.HostErrors), counts(p.PluginErrors))
	}
	done, total := p.Covered()
	fmt.Fprintf(w, "  covered         %.0f%% (%d of %d: contributed commands and drawn interactive ids)\n", p.Percent(), done, total)
}

// counts spells a count per name, sorted by name: "a 2, b 1"; "none".
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", escape.Text(k), m[k])
	}
	return strings.Join(parts, ", ")
}

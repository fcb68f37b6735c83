package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/check"
	"github.com/tapedeck/tapedeck/internal/coverage"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/present"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/smallfile"
	"github.com/tapedeck/tapedeck/playback"
)

func (e *env) coverageCommand() *cli.Command {
	return &cli.Command{
		Name:      "coverage",
		Usage:     "what the golden tapes exercise of each plugin, and what they leave untested",
		ArgsUsage: "[PATH…]",
		Description: "Reads every tape under the paths (" + defaultTapesUsage + ") and each plugin's\n" +
			"manifest (agentty-plugin.json in the tape's working directory) and prints,\n" +
			"per plugin: the host methods sent and the plugin methods seen, the UI\n" +
			"element types drawn, the interactive element ids that received a ui/event\n" +
			"of those drawn, the contributed commands no tape runs, and the error paths\n" +
			"taken. For an MCP server's tapes it counts the tools, resources, resource\n" +
			"templates and prompts the server advertised (its answers to tools/list,\n" +
			"resources/list, resources/templates/list and prompts/list) against those\n" +
			"the tapes use (tools/call, resources/read, prompts/get). --min PERCENT\n" +
			"exits 1 when a plugin's share of contributed commands and drawn interactive\n" +
			"ids exercised (a server's: of what it advertised) is lower.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON array of plugins"},
			&cli.Float64Flag{Name: "min", Usage: "exit 1 when a plugin's coverage is below `PERCENT`"},
		},
		Action: e.coverage,
	}
}

func (e *env) coverage(c *cli.Context) error {
	paths, err := tapePaths(c.Args().Slice(), "coverage")
	if err != nil {
		return err
	}
	tapes, err := playback.FindTapes(paths)
	if err != nil {
		return fail(2, "coverage: %v", err)
	}
	if len(tapes) == 0 {
		return fail(2, "coverage: no tapes under %s (a tape is a .jsonl file from tapedeck export)", strings.Join(paths, ", "))
	}
	plugins := map[string]*coverage.Plugin{}
	manifests := map[string]bool{}
	for _, t := range tapes {
		// Each tape is read as a stream: coverage keeps bounded tables,
		// never the frames.
		src, err := playback.TapeStream(t)
		if err != nil {
			return fail(2, "coverage: %v", err)
		}
		prof := profile.Of(src.Meta)
		id, manifest, data, err := tapeManifest(src.Meta, src.TapePath, !profile.IsServer(prof))
		if err != nil {
			return fail(2, "coverage: %v", err)
		}
		key := id + "\x00" + prof.Name() // a server and a plugin of one name are two
		p := plugins[key]
		if p == nil {
			p = coverage.New(id)
			p.UseProfile(prof)
			plugins[key] = p
		}
		if manifest != "" && !manifests[manifest] {
			manifests[manifest] = true
			if err := p.AddManifest(manifest, data); err != nil {
				return fail(2, "coverage: %v", err)
			}
		}
		if err := p.AddTape(t, src.Each); err != nil {
			return fail(2, "coverage: %v", err)
		}
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
			present.Coverage(e.stdout, p)
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
// in its working directory (a relative one is the tape folder's), unless
// it is a server's (plugin false). The plugin's id is the manifest's, else the one
// initialize named (a server's own name), else the tape's file name.
func tapeManifest(meta *frame.Session, tapePath string, plugin bool) (id, path string, data []byte, err error) {
	dir := meta.Cwd
	if !plugin {
		dir = ""
	}
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(tapePath), dir)
	}
	if dir != "" {
		path = filepath.Join(dir, check.ManifestFile)
		data, err = smallfile.Read(path, smallfile.JSONCap)
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
		id = meta.Plugin.ID
	}
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(tapePath), ".jsonl")
	}
	return id, path, data, nil
}

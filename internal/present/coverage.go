package present

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tapedeck/tapedeck/internal/coverage"
	"github.com/tapedeck/tapedeck/internal/escape"
	"github.com/tapedeck/tapedeck/internal/profile"
)

// Coverage prints what a plugin's tapes cover, for a person; a server's
// (an MCP server's) in its own words (serverCoverage).
func Coverage(w io.Writer, p *coverage.Plugin) {
	if p.Profile != "" {
		serverCoverage(w, p)
		return
	}
	where := "no manifest found"
	if p.Manifest != "" {
		where = "manifest " + p.Manifest
	}
	fmt.Fprintf(w, "%s  (%s: %s; %s)\n", escape.Text(p.ID), Count(int64(len(p.Tapes)), "tape", "tapes"), escape.Text(strings.Join(p.Tapes, ", ")), escape.Text(where))
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

// serverCoverage prints what the tapes of a peer other than an Agentty
// plugin cover: what the client and the server sent, then for each kind
// of thing the server offers, how many of those it advertised the tapes
// used, those never used, and those used but never advertised.
func serverCoverage(w io.Writer, p *coverage.Plugin) {
	fmt.Fprintf(w, "%s  (%s server; %s: %s)\n", escape.Text(p.ID), escape.Text(p.Profile), Count(int64(len(p.Tapes)), "tape", "tapes"), escape.Text(strings.Join(p.Tapes, ", ")))
	row := func(label, text string) { fmt.Fprintf(w, "  %-19s %s\n", label, text) }
	row("client sent", counts(p.HostMethods))
	row("server sent", counts(p.PluginMethods))
	type kind struct {
		advertised, used  int
		got, never, extra []string
	}
	kinds := map[string]*kind{}
	for _, o := range p.Offered {
		k := kinds[o.Kind]
		if k == nil {
			k = &kind{}
			kinds[o.Kind] = k
		}
		switch {
		case !o.Advertised:
			k.extra = append(k.extra, fmt.Sprintf("%s %d", o.Name, o.Uses))
		case o.Uses > 0:
			k.advertised++
			k.used++
			k.got = append(k.got, fmt.Sprintf("%s %d", o.Name, o.Uses))
		default:
			k.advertised++
			k.never = append(k.never, o.Name)
		}
	}
	for _, o := range offersOf(p.Profile) {
		k := kinds[o.Kind]
		if k == nil && p.HostMethods[o.List] == 0 {
			continue // never listed, never used: nothing to say
		}
		if k == nil {
			k = &kind{}
		}
		line := fmt.Sprintf("%d of %d advertised %s", k.used, k.advertised, o.Verb)
		if k.advertised == 0 {
			line = "none advertised (no " + o.List + " answer names one)"
			if p.HostMethods[o.List] == 0 {
				line = "none advertised (the tapes never ask " + o.List + ")"
			}
		}
		if len(k.got) > 0 {
			line += ": " + strings.Join(k.got, ", ")
		}
		if len(k.never) > 0 {
			line += "; never: " + strings.Join(k.never, ", ")
		}
		if len(k.extra) > 0 {
			line += "; " + o.Verb + " but not advertised: " + strings.Join(k.extra, ", ")
		}
		row(o.Kinds, escape.Text(line))
	}
	if len(p.HostErrors)+len(p.PluginErrors) == 0 {
		row("error paths", "none taken (no client error answer, no server error reply)")
	} else {
		row("error paths", "client error answers: "+counts(p.HostErrors)+"; server error replies: "+counts(p.PluginErrors))
	}
	done, total := p.Covered()
	row("covered", fmt.Sprintf("%.0f%% (%d of %d: what the server advertised, used)", p.Percent(), done, total))
}

// offersOf is what the peers of the profile named offer, nil when they
// offer nothing tapedeck knows of.
func offersOf(name string) []profile.Offer {
	prof, err := profile.Get(name)
	if err != nil {
		return nil
	}
	if o, ok := prof.(interface{ Offers() []profile.Offer }); ok {
		return o.Offers()
	}
	return nil
}

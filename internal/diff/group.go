package diff

import "strings"

// Group is one change and every difference that is that same change: the
// same kind of difference of the same message, with the same values
// changed from the same old to the same new ones (a label changed in every
// panel, the same notification missing twice). Render prints a group
// once.
type Group struct {
	// Kind and What are the first difference's (not in JSON: its
	// differences say them).
	Kind Kind   `json:"-"`
	What string `json:"-"`
	// Count is how many differences the group holds; Differences are
	// their indexes in Result.Differences, the first the one shown.
	Count       int   `json:"count"`
	Differences []int `json:"differences"`
	// RecordedSeqs and LiveSeqs are their frames' seqs on each side, in
	// the order of Differences.
	RecordedSeqs []uint64 `json:"recordedSeqs,omitempty"`
	LiveSeqs     []uint64 `json:"liveSeqs,omitempty"`
}

// Groups groups the differences that are the same change, in the order
// of their first.
func (r *Result) Groups() []Group {
	var out []Group
	at := map[string]int{}
	for i, d := range r.Differences {
		k := sameKey(d)
		g, ok := at[k]
		if !ok {
			g = len(out)
			at[k] = g
			out = append(out, Group{Kind: d.Kind, What: d.What})
		}
		grp := &out[g]
		grp.Count++
		grp.Differences = append(grp.Differences, i)
		if d.Recorded != nil {
			grp.RecordedSeqs = append(grp.RecordedSeqs, d.Recorded.Seq)
		}
		if d.Live != nil {
			grp.LiveSeqs = append(grp.LiveSeqs, d.Live.Seq)
		}
	}
	return out
}

// sameKey is what differences that are the same change share.
func sameKey(d Difference) string {
	var b strings.Builder
	b.WriteString(string(d.Kind) + "\x00" + d.Dir + "\x00" + d.What + "\x00")
	content := func(s *Side) {
		b.WriteString("\x01")
		if s == nil {
			return
		}
		if s.key != "" {
			b.WriteString(s.key)
		} else {
			b.WriteString(s.Raw)
		}
	}
	switch {
	case d.Kind == Changed && len(d.Changes) > 0:
		for _, c := range d.Changes {
			full := c.full
			if full == "" {
				full = c.Old + "\x00" + c.New
			}
			b.WriteString("\x01" + c.Path + "\x00" + full)
		}
		if d.MoreChanges > 0 {
			// The changes not listed differ unseen: the same content is
			// the same change.
			content(d.Recorded)
			content(d.Live)
		}
	case d.Kind == Changed:
		content(d.Recorded)
		content(d.Live)
	case d.Kind == Extra:
		content(d.Live)
	default:
		content(d.Recorded)
	}
	return b.String()
}

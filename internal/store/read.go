package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
)

// Session returns the metadata of the session with exactly this id.
func (s *Store) Session(id string) (*frame.Session, error) {
	var m *frame.Session
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(id)); v != nil {
			m = new(frame.Session)
			if err := json.Unmarshal(v, m); err != nil {
				return damaged("session %q: record does not decode: %v", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	if m != nil {
		return m, nil
	}
	m, err = s.spoolSession(s.SpoolPath(id), nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return m, err
}

// Resolve turns a session reference into a session: a full id, a unique id
// prefix, a name (the newest session of that name wins only when it is the
// only one), or "last" (the newest session). An ambiguous prefix or name is
// an error wrapping ErrAmbiguous that lists the candidates; an unknown one
// wraps ErrNotFound.
func (s *Store) Resolve(ref string) (*frame.Session, error) {
	list, _, err := s.list(nil, false, false)
	if err != nil {
		return nil, err
	}
	sum, err := resolveIn(list, ref)
	if err != nil {
		return nil, err
	}
	m, err := s.Session(sum.ID)
	if errors.Is(err, ErrNotFound) {
		// Listed, so its index entry or spool was there a moment ago:
		// either it was removed meanwhile or its record is damaged.
		if again, _, lerr := s.list(nil, false, false); lerr == nil {
			for _, l := range again {
				if l.ID == sum.ID {
					return nil, damaged("session %q is in the index, but its record is missing", sum.ID)
				}
			}
		}
	}
	return m, err
}

// resolve is resolveIn over full sessions.
func resolve(list []frame.Session, ref string) (*frame.Session, error) {
	sums := make([]Summary, len(list))
	for i := range list {
		sums[i] = summarize(&list[i])
	}
	sum, err := resolveIn(sums, ref)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].ID == sum.ID {
			return &list[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNotFound, ref)
}

func resolveIn(list []Summary, ref string) (*Summary, error) {
	if ref == "" {
		return nil, fmt.Errorf("%w: empty session reference", ErrNotFound)
	}
	if ref == "last" {
		if len(list) == 0 {
			return nil, fmt.Errorf("%w: the store has no sessions yet", ErrNotFound)
		}
		return &list[0], nil
	}
	var byID, byName []*Summary
	for i := range list {
		m := &list[i]
		if m.ID == ref {
			return m, nil
		}
		if strings.HasPrefix(m.ID, strings.ToLower(ref)) {
			byID = append(byID, m)
		}
		if m.Name == ref {
			byName = append(byName, m)
		}
	}
	for _, cands := range [][]*Summary{byName, byID} {
		switch len(cands) {
		case 0:
			continue
		case 1:
			return cands[0], nil
		}
		var b strings.Builder
		for i, c := range cands {
			if i == 8 {
				fmt.Fprintf(&b, ", … %d more", len(cands)-8)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.ID)
			if c.Name != "" {
				fmt.Fprintf(&b, " (%s)", c.Name)
			}
		}
		return nil, fmt.Errorf("%w: %q matches %d sessions: %s; give more of the id", ErrAmbiguous, ref, len(cands), b.String())
	}
	return nil, fmt.Errorf("%w: %q (see tapedeck ls)", ErrNotFound, ref)
}

// Frames calls fn with every frame of session id in order, from the database
// or, for a session not yet ingested, from its spool. The frame and its Raw
// are valid only during the call. An error from fn stops the walk and is
// returned as it is. The database is read in batches, each in a short
// transaction, so fn may be slow without holding up recorders; a session
// removed meanwhile ends the walk with ErrRemoved.
func (s *Store) Frames(id string, fn func(*frame.Frame) error) error {
	for attempt := 0; ; attempt++ {
		found, err := s.framesDB(id, fn)
		if err != nil || found {
			return err
		}
		_, err = s.spoolSession(s.SpoolPath(id), fn)
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if attempt > 0 {
			return fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		// The spool may have been ingested between the two looks.
	}
}

package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
)

// Verified is what Verify found.
type Verified struct {
	Sessions int64 // session records read
	Frames   int64 // frames read
	// Unsummed counts the frames stored before checksums (schema 1): they
	// were decoded, but damage to their bytes cannot be seen.
	Unsummed int64
	// Problems names each piece of damage: a page bbolt's consistency
	// check objects to, a session record or index entry that does not
	// decode, a frame or chunk whose checksum does not match.
	Problems []string
}

// Verify reads the whole database: bbolt's consistency check of every page,
// then every session record, index entry, frame and chunk, checking every
// checksum. Damage is reported in Problems, not as the error, which is for
// a store that could not be read at all (busy, unreadable: no finding
// about the database, so no damage). A store without
// a database verifies clean. It holds the store's shared lock throughout,
// so recorders leave their spools for later while it runs.
func (s *Store) Verify() (*Verified, error) {
	v := &Verified{}
	note := v.note
	unlock, err := s.lock(false, s.lockTimeout)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer unlock()
	// The freelist and the page headers bbolt's check asserts on are
	// checked first (a read-only open does not read them), then the shape
	// of every tree, with plain reads: bbolt's cursors and its own check
	// loop for ever on a cycle of pages.
	switch err := checkFile(s.dbPath(), true); {
	case err == nil, errors.Is(err, os.ErrNotExist), errors.Is(err, ErrEmpty):
	case errors.Is(err, ErrDamaged):
		note(err)
		return v, nil
	default: // it could not be read: that is no finding about it
		return nil, fmt.Errorf("verify: cannot read %s: %w", s.dbPath(), err)
	}
	problems, err := s.checkTree()
	if err != nil && !errors.Is(err, ErrDamaged) {
		return nil, err
	}
	if err != nil || len(problems) > 0 {
		v.Problems = append(v.Problems, problems...)
		if err != nil {
			note(err)
		}
		return v, nil
	}
	db, closeDB, err := s.db(false, 0)
	if errors.Is(err, ErrDamaged) {
		note(err)
		return v, nil
	}
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	if db == nil {
		return v, nil
	}
	defer closeDB()
	// bbolt's own check runs on a goroutine of its own, where a panic on a
	// damaged page cannot be caught: first walk every bucket and key here,
	// where it can, and run the check only on a tree that walks clean.
	var sum byte // every byte read, so that none of the reads can be left out
	err = safely(func() error { return db.View(func(tx *bolt.Tx) error { return walk(tx.Cursor(), &sum) }) })
	if err != nil {
		note(err)
	} else {
		err = safely(func() error {
			return db.View(func(tx *bolt.Tx) error {
				for err := range tx.Check() {
					v.Problems = append(v.Problems, "bbolt check: "+err.Error())
				}
				return nil
			})
		})
		if err != nil {
			note(err)
		}
	}
	if err := safely(func() error { return db.View(v.sessions) }); err != nil {
		note(err)
	}
	return v, nil
}

// sessions verifies every session of tx: its record, index entry and
// frames.
func (v *Verified) sessions(tx *bolt.Tx) error {
	sessions, frames, chunks := tx.Bucket(bucketSessions), tx.Bucket(bucketFrames), tx.Bucket(bucketChunks)
	if sessions == nil || frames == nil {
		return nil
	}
	index := tx.Bucket(bucketIndex)
	var ids [][]byte
	if err := sessions.ForEach(func(k, _ []byte) error { ids = append(ids, bytes.Clone(k)); return nil }); err != nil {
		return err
	}
	for _, id := range ids {
		if err := safely(func() error { return v.session(sessions, index, frames, chunks, id) }); err != nil {
			v.note(fmt.Errorf("session %s: %w", id, err))
		}
	}
	return nil
}

// session verifies one session: its record, its index entry, its frames.
func (v *Verified) session(sessions, index, frames, chunks *bolt.Bucket, id []byte) error {
	v.Sessions++
	var m frame.Session
	if err := json.Unmarshal(sessions.Get(id), &m); err != nil {
		v.Problems = append(v.Problems, fmt.Sprintf("session %s: record does not decode: %v", id, err))
	}
	if index != nil {
		if e := index.Get(id); e != nil {
			if _, err := decodeSummary(id, e); err != nil {
				v.Problems = append(v.Problems, fmt.Sprintf("session %s: index entry does not decode", id))
			}
		}
	}
	fb := frames.Bucket(id)
	if fb == nil {
		if _, has, _ := storedTally(frames.Tx(), id); has {
			v.Problems = append(v.Problems, fmt.Sprintf("session %s: its frames are missing", id))
		}
		return nil
	}
	var cb *bolt.Bucket
	if chunks != nil {
		cb = chunks.Bucket(id)
	}
	var big []byte
	var last uint64
	var read tally
	want, has, tallyErr := storedTally(fb.Tx(), id)
	defer func() {
		err := tallyErr
		if err == nil && has {
			err = read.check(string(id), want)
		}
		if err != nil {
			v.note(err)
		}
	}()
	c := fb.Cursor()
	for k, val := c.First(); k != nil; k, val = c.Next() {
		v.Frames++
		f, summed, err := decodeValue(string(id), k, val, cb, &big, has)
		if !summed && err == nil {
			v.Unsummed++
		}
		if err != nil {
			v.note(err)
			if len(k) == 8 {
				read.add(binary.BigEndian.Uint64(k)) // one problem per frame is enough
			}
			continue
		}
		read.add(f.Seq)
		if len(k) != 8 || binary.BigEndian.Uint64(k) != f.Seq || f.Seq <= last {
			v.Problems = append(v.Problems, fmt.Sprintf("session %s frame %d: stored under the wrong key %x", id, f.Seq, k))
		}
		last = f.Seq
		if cap(big) > 1<<20 {
			big = nil
		}
	}
	return nil
}

// walk visits every key and value of the buckets c ranges over, and of the
// buckets inside them, reading every byte of each and checking that the
// keys are in order, so that a damaged page faults or panics here, where
// it is caught, before bbolt's own check (on a goroutine of its own) reads
// it.
func walk(c *bolt.Cursor, sum *byte) error {
	b := c.Bucket()
	var prev []byte
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return damaged("keys out of order after %x", prev)
		}
		prev = append(prev[:0], k...)
		for _, x := range v {
			*sum ^= x
		}
		if v == nil {
			if inner := b.Bucket(k); inner != nil {
				if err := walk(inner.Cursor(), sum); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// note adds err to the problems: for damage, what was found.
func (v *Verified) note(err error) {
	var d *damage
	if errors.As(err, &d) {
		v.Problems = append(v.Problems, d.what)
		return
	}
	v.Problems = append(v.Problems, err.Error())
}

// checkTree runs checkTree on the database file, under the store's lock.
func (s *Store) checkTree() ([]string, error) {
	unlock, err := s.lock(false, s.lockTimeout)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer unlock()
	f, err := os.Open(s.dbPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("verify: cannot read %s: %w", s.dbPath(), err)
	}
	defer f.Close()
	m, err := newestMeta(f)
	if err != nil {
		return nil, err
	}
	return checkTree(f, m), nil
}

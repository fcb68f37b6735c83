package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tapedeck/tapedeck/frame"
	"github.com/tapedeck/tapedeck/internal/profile"
	"github.com/tapedeck/tapedeck/internal/spool"
)

// The session index: one compact binary summary per session, written with
// the session record, so that listing and resolving do not decode every
// session's JSON metadata. keyIndexed in the meta bucket says the index is
// complete; a database written before it existed is indexed at its next
// read-write open, and read without it until then.
var (
	bucketIndex = []byte("index")
	keyIndexed  = []byte("indexed")
	// indexComplete is keyIndexed's value for an index whose entries say
	// what each session lost and, for a server's session, who the server
	// and its client were; "1" marked one whose entries said neither, "2"
	// one whose entries did not say the server.
	indexComplete = []byte("3")
)

const summaryVersion = 1

// Summary is what listing a session and resolving a reference to it need.
type Summary struct {
	ID      string
	Name    string
	Plugin  frame.Plugin
	Started time.Time
	Ended   *time.Time
	Status  string
	Exit    frame.Exit
	Frames  frame.Counts
	// Lost is what the recording could not keep (a full disk), or nil.
	Lost *frame.Lost
	// Server is, for a server's session (an MCP or a language server's:
	// profile.IsServer), its profile, protocol and client, for ls to name
	// it; nil for an Agentty plugin's or a JSON-RPC peer's.
	Server *Server
}

// Server is what a server's session says of the protocol and the client
// (see frame.Session).
type Server struct {
	Profile, Protocol     string
	HostName, HostVersion string
}

// serverOf is a session's Server, or nil when it is not a server's.
func serverOf(m *frame.Session) *Server {
	p, err := profile.Get(m.Profile)
	if err != nil || m.Profile == "" || !profile.IsServer(p) {
		return nil
	}
	return &Server{Profile: m.Profile, Protocol: m.Protocol, HostName: m.HostName, HostVersion: m.HostVersion}
}

// Duration is how long the session ran (until now when it has not ended).
func (s *Summary) Duration(now time.Time) time.Duration {
	if s.Ended != nil {
		return s.Ended.Sub(s.Started)
	}
	return now.Sub(s.Started)
}

func summarize(m *frame.Session) Summary {
	return Summary{ID: m.ID, Name: m.Name, Plugin: m.Plugin, Started: m.Started, Ended: m.Ended, Status: m.Status, Exit: m.Exit, Frames: m.Frames, Lost: m.Lost,
		Server: serverOf(m)}
}

func appendSummary(dst []byte, m *frame.Session) []byte {
	dst = append(dst, summaryVersion)
	dst = binary.AppendVarint(dst, m.Started.UnixNano())
	if m.Ended != nil {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, m.Ended.UnixNano())
	} else {
		dst = append(dst, 0)
	}
	for _, s := range []string{m.Name, m.Status, m.Plugin.ID, m.Plugin.Name, m.Plugin.Version, m.Exit.Signal} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	if m.Exit.Code != nil {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, int64(*m.Exit.Code))
	} else {
		dst = append(dst, 0)
	}
	for _, n := range []int64{m.Frames.In, m.Frames.Out, m.Frames.Err} {
		dst = binary.AppendVarint(dst, n)
	}
	// What was lost comes after what the first entries held, and a
	// server's profile, protocol and client after it: an entry ends where
	// what it has to say ends, so a plugin's session that lost nothing has
	// the first entries' form.
	srv := serverOf(m)
	peer := srv != nil
	if m.Lost != nil {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, m.Lost.Frames)
		dst = binary.AppendVarint(dst, m.Lost.Bytes)
		dst = binary.AppendUvarint(dst, uint64(len(m.Lost.Reason)))
		dst = append(dst, m.Lost.Reason...)
	} else if peer {
		dst = append(dst, 0)
	}
	if peer {
		for _, s := range []string{srv.Profile, srv.Protocol, srv.HostName, srv.HostVersion} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst
}

func decodeSummary(id, b []byte) (Summary, error) {
	s := Summary{ID: string(id)}
	bad := damaged("index entry of session %s", id)
	if len(b) == 0 || b[0] != summaryVersion {
		return s, bad
	}
	b = b[1:]
	varint := func() (int64, bool) {
		v, n := binary.Varint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	flag := func() (bool, bool) {
		if len(b) == 0 {
			return false, false
		}
		f := b[0] == 1
		b = b[1:]
		return f, true
	}
	str := func() (string, bool) {
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return "", false
		}
		v := string(b[n : n+int(l)])
		b = b[n+int(l):]
		return v, true
	}
	started, ok := varint()
	if !ok {
		return s, bad
	}
	s.Started = time.Unix(0, started)
	has, ok := flag()
	if !ok {
		return s, bad
	}
	if has {
		e, ok := varint()
		if !ok {
			return s, bad
		}
		t := time.Unix(0, e)
		s.Ended = &t
	}
	for _, p := range []*string{&s.Name, &s.Status, &s.Plugin.ID, &s.Plugin.Name, &s.Plugin.Version, &s.Exit.Signal} {
		if *p, ok = str(); !ok {
			return s, bad
		}
	}
	if has, ok = flag(); !ok {
		return s, bad
	}
	if has {
		c, ok := varint()
		if !ok {
			return s, bad
		}
		code := int(c)
		s.Exit.Code = &code
	}
	for _, p := range []*int64{&s.Frames.In, &s.Frames.Out, &s.Frames.Err} {
		if *p, ok = varint(); !ok {
			return s, bad
		}
	}
	if len(b) == 0 { // written before it said what was lost, or nothing was
		return s, nil
	}
	if has, ok = flag(); !ok {
		return s, bad
	}
	if has {
		var l frame.Lost
		if l.Frames, ok = varint(); !ok {
			return s, bad
		}
		if l.Bytes, ok = varint(); !ok {
			return s, bad
		}
		if l.Reason, ok = str(); !ok {
			return s, bad
		}
		s.Lost = &l
	}
	if len(b) == 0 { // written before it said the server, or no server's
		if !has {
			return s, bad // a flag 0 says a server follows
		}
		return s, nil
	}
	// The server's four strings end the entry: they share one allocation,
	// the rest of the entry as a string.
	rest, off := string(b), 0
	s.Server = &Server{}
	for _, p := range []*string{&s.Server.Profile, &s.Server.Protocol, &s.Server.HostName, &s.Server.HostVersion} {
		l, n := binary.Uvarint(b[off:])
		if n <= 0 || uint64(len(b)-off-n) < l {
			return s, bad
		}
		*p = rest[off+n : off+n+int(l)]
		off += n + int(l)
	}
	return s, nil
}

// buildIndex writes the index entry of every session that lacks one and
// marks the index complete. It runs inside a read-write transaction.
func buildIndex(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if bytes.Equal(meta.Get(keyIndexed), indexComplete) {
		return nil
	}
	idx, err := tx.CreateBucketIfNotExists(bucketIndex)
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		if idx.Get(k) != nil && !bytes.Contains(v, []byte(`"lost":`)) && !hasServer(v) {
			return nil // an entry of an older index holds all there is
		}
		var m frame.Session
		if err := json.Unmarshal(v, &m); err != nil {
			return damaged("session %q: record does not decode: %v", k, err)
		}
		return idx.Put(k, appendSummary(nil, &m))
	})
	if err != nil {
		return err
	}
	return meta.Put(keyIndexed, indexComplete)
}

// hasServer reports whether a session record may be a server's (see
// serverOf): what an index entry written before it said the server lacks.
func hasServer(record []byte) bool {
	return bytes.Contains(record, []byte(`"profile":"mcp"`)) || bytes.Contains(record, []byte(`"profile":"lsp"`))
}

// storedSummaries reads the summary of every stored session.
func storedSummaries(tx *bolt.Tx, fn func(Summary) error) error {
	if m := tx.Bucket(bucketMeta); m != nil && bytes.Equal(m.Get(keyIndexed), indexComplete) {
		if idx := tx.Bucket(bucketIndex); idx != nil {
			return idx.ForEach(func(k, v []byte) error {
				s, err := decodeSummary(k, v)
				if err != nil {
					return err
				}
				return fn(s)
			})
		}
	}
	b := tx.Bucket(bucketSessions)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		var m frame.Session
		if err := json.Unmarshal(v, &m); err != nil {
			return damaged("session %q: record does not decode: %v", k, err)
		}
		return fn(summarize(&m))
	})
}

// Query narrows a listing. A nil *Query lists everything.
type Query struct {
	Plugin string // only sessions of this plugin id
	Limit  int    // at most this many (the newest); 0 means no limit
}

func (q *Query) keep(s *Summary) bool {
	return q == nil || q.Plugin == "" || s.Plugin.ID == q.Plugin
}

// sortNewestFirst sorts list in place by start time, newest first (ties by
// id). It sorts small keys and then moves each summary once, following the
// permutation's cycles: a Summary is large, and swapping it in the sort
// cost more than the comparisons.
func sortNewestFirst(list []Summary) {
	type key struct {
		started time.Time
		id      string
		from    int // where the summary is now
	}
	keys := make([]key, len(list))
	for i := range list {
		keys[i] = key{list[i].Started, list[i].ID, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := b.started.Compare(a.started); c != 0 {
			return c
		}
		return strings.Compare(b.id, a.id)
	})
	// Position i takes the summary at keys[i].from. Follow each cycle once,
	// marking the positions filled with -1.
	for i := range keys {
		if keys[i].from < 0 || keys[i].from == i {
			continue
		}
		held := list[i]
		j := i
		for {
			from := keys[j].from
			keys[j].from = -1
			if from == i {
				list[j] = held
				break
			}
			list[j] = list[from]
			j = from
		}
	}
}

// List lists sessions, newest first: those stored and those still in
// spools (a live one has status recording and its counts so far). It reads
// the compact index, not the sessions' metadata.
func (s *Store) List(q *Query) ([]Summary, error) {
	list, _, err := s.list(q, true, false)
	return list, err
}

// ListRefs is List for naming sessions (shell completion): ids, names and
// starts are right, a live session's counts and status are not read (its
// spool's header is, not its frames), so it costs the index and a header a
// live session, however much they recorded.
func (s *Store) ListRefs(q *Query) ([]Summary, error) {
	list, _, err := s.list(q, false, false)
	return list, err
}

// ListJSON is List with each session's full metadata as JSON (as stored:
// the frame.Session encoding), in the same order.
func (s *Store) ListJSON(q *Query) ([]Summary, []json.RawMessage, error) {
	return s.list(q, true, true)
}

// list does List. counts asks for live sessions' counts and status (which
// read their whole spools; resolving a reference needs neither); withJSON
// asks for the metadata JSON too.
func (s *Store) list(q *Query, counts, withJSON bool) ([]Summary, []json.RawMessage, error) {
	var list []Summary
	raw := map[string]json.RawMessage{}
	seen := map[string]bool{}
	err := s.view(func(tx *bolt.Tx) error {
		sessions := tx.Bucket(bucketSessions)
		return storedSummaries(tx, func(sum Summary) error {
			seen[sum.ID] = true
			if !q.keep(&sum) {
				return nil
			}
			list = append(list, sum)
			if withJSON && sessions != nil {
				raw[sum.ID] = bytes.Clone(sessions.Get([]byte(sum.ID)))
			}
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	paths, err := s.spools()
	if err != nil {
		return nil, nil, err
	}
	for _, path := range paths {
		var m *frame.Session
		if counts {
			// A spool that shrinks as its recorder ends is read to its
			// new end (spool.Reader).
			m, err = s.spoolSession(path, nil)
		} else {
			m, err = spoolHeader(path)
		}
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, spool.ErrNotSpool) {
			// Ingested meanwhile, or no spool at all: Recover moves such a
			// file aside and says so; a listing goes on without it.
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		sum := summarize(m)
		if seen[m.ID] || !q.keep(&sum) {
			continue
		}
		list = append(list, sum)
		if withJSON {
			js, err := json.Marshal(m)
			if err != nil {
				return nil, nil, fmt.Errorf("list session %s: %w", m.ID, err)
			}
			raw[m.ID] = js
		}
	}
	sortNewestFirst(list)
	if q != nil && q.Limit > 0 && len(list) > q.Limit {
		list = list[:q.Limit]
	}
	if !withJSON {
		return list, nil, nil
	}
	js := make([]json.RawMessage, len(list))
	for i := range list {
		js[i] = raw[list[i].ID]
	}
	return list, js, nil
}

// Reading frames from the database happens in batches, each in its own
// short read transaction, so that a slow consumer (a pager, a pipe) never
// holds the store's lock while it waits.
const (
	readBatchFrames = 1024
	readBatchBytes  = 4 << 20
)

// framesDB walks the stored frames of id. found is false when the database
// does not hold the session (nothing was called).
func (s *Store) framesDB(id string, fn func(*frame.Frame) error) (found bool, err error) {
	key := []byte(id)
	var (
		after []byte
		arena []byte
		big   []byte
		batch []frame.Frame
		spans [][2]int
		heads [][2]int // each frame's header block in arena; {0, 0} for none
		read  tally    // what the walk has read
		want  tally    // what was stored, read with the last batch
		has   bool     // whether the session has a tally
	)
	for {
		more, present := false, false
		arena, batch, spans, heads = arena[:0], batch[:0], spans[:0], heads[:0]
		err := s.view(func(tx *bolt.Tx) error {
			if tx.Bucket(bucketSessions).Get(key) == nil {
				return nil
			}
			present = true
			frames := tx.Bucket(bucketFrames).Bucket(key)
			if frames == nil {
				var err error
				want, has, err = storedTally(tx, key)
				return err
			}
			chunks := tx.Bucket(bucketChunks).Bucket(key)
			// A session with a tally was stored with checksums: each of
			// its frames has one (a tally that does not decode is an
			// error at the end of the walk).
			_, summed, _ := storedTally(tx, key)
			c := frames.Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.First()
			} else if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
				k, v = c.Next()
			}
			for ; k != nil; k, v = c.Next() {
				if len(batch) >= readBatchFrames || len(arena) >= readBatchBytes {
					more = true
					break
				}
				f, _, err := decodeValue(id, k, v, chunks, &big, summed)
				if err != nil {
					return err
				}
				read.add(f.Seq)
				start := len(arena)
				arena = append(arena, f.Raw...)
				spans = append(spans, [2]int{start, len(arena)})
				// The header block is in the database's memory too, which
				// is gone once the transaction ends: copy it out as well.
				head := [2]int{}
				if h := f.Head(); h != nil {
					head[0] = len(arena)
					arena = append(arena, h...)
					head[1] = len(arena)
				}
				heads = append(heads, head)
				batch = append(batch, f)
				after = append(after[:0], k...)
			}
			if !more {
				var err error
				want, has, err = storedTally(tx, key)
				return err
			}
			return nil
		})
		if err != nil {
			return found, err
		}
		if !present {
			if found {
				return true, fmt.Errorf("%w: %s", ErrRemoved, id)
			}
			return false, nil
		}
		found = true
		for i := range batch {
			batch[i].Raw = arena[spans[i][0]:spans[i][1]:spans[i][1]]
			if h := heads[i]; batch[i].Head() != nil {
				batch[i].SetHead(arena[h[0]:h[1]:h[1]])
			}
			if err := fn(&batch[i]); err != nil {
				return true, err
			}
		}
		if cap(big) > 1<<20 {
			big = nil
		}
		if cap(arena) > 2*readBatchBytes {
			arena = nil
		}
		if !more {
			if has {
				return true, read.check(id, want)
			}
			return true, nil
		}
	}
}

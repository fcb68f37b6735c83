package spool

import (
	"bytes"
	"path/filepath"
	"testing"
)

// benchLine is a 200-byte line, an interactive plugin's typical one.
var benchLine = bytes.Repeat([]byte("abcdefghij"), 20)

// BenchmarkWrite is the cost of adding one 200-byte record of each kind the
// recorder writes per line and flushing it, as the recorder does after each
// read: the payload header's encoding, the CRC-32C and the copy into the
// mapped file. One op is one record.
func BenchmarkWrite(b *testing.B) {
	hdr := []byte("\x00\x02\x81\x80\x01\x80\x89\x7a") // a frame header
	for _, kind := range []string{"frame", "lines", "piece", "tail"} {
		b.Run(kind, func(b *testing.B) {
			w, err := Create(filepath.Join(b.TempDir(), "s.spool"), []byte(`{"id":"x"}`))
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.SetBytes(int64(len(benchLine)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				switch kind {
				case "frame":
					err = w.AddFrame(hdr, benchLine)
				case "lines":
					err = w.AddLines(StreamOut, uint64(i), int64(i)*1000, benchLine)
				case "piece":
					_, err = w.AddPiece(StreamOut, int64(i)*200, int64(i)*1000, benchLine)
				case "tail":
					err = w.AddTail(int64(i)*200, hdr, benchLine)
				}
				if err != nil {
					b.Fatal(err)
				}
				if _, err := w.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRead is the cost of reading a spool of 10,000 records (lines
// and pieces of 200 bytes) and decoding each, as the store's ingest
// does before it looks at the frames. One op is one whole spool.
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.spool")
	w, err := Create(path, []byte(`{"id":"x"}`))
	if err != nil {
		b.Fatal(err)
	}
	const n = 10000
	for i := range n {
		if i%2 == 0 {
			w.AddLines(StreamOut, uint64(i), int64(i)*1000, append(bytes.Clone(benchLine[:199]), '\n'))
		} else {
			w.AddPiece(StreamIn, 0, int64(i)*1000, benchLine)
		}
		if _, err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	file := fileOf(b, path)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Session(); err != nil {
			b.Fatal(err)
		}
		for range n {
			typ, p, err := r.Next()
			if err != nil {
				b.Fatal(err)
			}
			switch typ {
			case TypeLines:
				_, _, _, _, err = DecodeLines(p)
			case TypePiece:
				_, _, _, _, err = DecodePiece(p)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}

package diff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func decodeNumber(b []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, json.Unmarshal(b, new(any)) // trailing data: the same error json.Valid sees
	}
	return v, nil
}

func TestCanonicalReplacesTheID(t *testing.T) {
	id := "#3"
	if k, _ := canonical(nil, []byte(`{"id":7,"method":"m","params":{"id":1}}`), &id); string(k) != `{"id":"#3","method":"m","params":{"id":1}}` {
		t.Errorf("id replaced: %s", k)
	}
	if k, _ := canonical(nil, []byte(`{"id":7}`), nil); string(k) != `{"id":7}` {
		t.Errorf("id kept: %s", k)
	}
}

// FuzzCanonical: the spelling diff compares frames by (package canon's)
// takes exactly the valid JSON values, keeps their value (as a line reads
// once invalid UTF-8 is replaced, as package message replaces it), and
// spells a value the same however it was written. Its seeds, in
// testdata/fuzz/FuzzCanonical, are also the corpus on which replay's
// tests hold that replay's matching agrees with diff's equality.
func FuzzCanonical(f *testing.F) {
	f.Fuzz(func(t *testing.T, in string) {
		k, ok := canonical(nil, []byte(in), nil)
		v, err := decodeNumber(bytes.ToValidUTF8([]byte(in), []byte("\uFFFD")))
		if ok != (err == nil && json.Valid([]byte(in))) {
			t.Fatalf("canonical(%q) ok %v, but decoding says %v", in, ok, err)
		}
		if !ok {
			return
		}
		back, err := decodeNumber(k)
		if err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("canonical(%q) = %s, which decodes to %v, want %v (%v)", in, k, back, v, err)
		}
		again, _ := json.Marshal(v)
		k2, ok := canonical(nil, again, nil)
		if !ok || !bytes.Equal(k, k2) {
			t.Fatalf("the same value spelt %q and %q canonicalises to %s and %s", in, again, k, k2)
		}
	})
}

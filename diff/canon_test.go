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

func TestCanonical(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{`{"b":1,"a":[1, 2,{"y":null,"x":true}]}`, `{ "a" : [1,2,{"x":true,"y":null}], "b":1 }`},
		{`"\u0041\n\/"`, `"A\u000a/"`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"k\u00e9":"\u00e9"}`, `{"ké":"é"}`},
	} {
		ka, oka := canonical(nil, []byte(c.a), nil)
		kb, okb := canonical(nil, []byte(c.b), nil)
		if !oka || !okb || !bytes.Equal(ka, kb) {
			t.Errorf("canonical(%s) = %s %v, canonical(%s) = %s %v: want equal", c.a, ka, oka, c.b, kb, okb)
		}
	}
	for _, bad := range []string{`{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `"a`, "\"\x01\"", `{"a" 1}`, `tru`, `1 2`, ``} {
		if _, ok := canonical(nil, []byte(bad), nil); ok {
			t.Errorf("canonical(%q) took invalid JSON", bad)
		}
	}
	id := "#3"
	if k, _ := canonical(nil, []byte(`{"id":7,"method":"m","params":{"id":1}}`), &id); string(k) != `{"id":"#3","method":"m","params":{"id":1}}` {
		t.Errorf("id replaced: %s", k)
	}
}

// FuzzCanonical: canonical takes exactly the valid JSON values, keeps their
// value, and spells a value the same however it was written.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2]}`, `"\u00e9\ud800"`, `[true,false,null,-1.5e+3]`, `{"a":{"a":{}}}`, "\"\xff\"", ` 1 `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		k, ok := canonical(nil, []byte(in), nil)
		v, err := decodeNumber([]byte(in))
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

func TestCanonicalDepth(t *testing.T) {
	deep := bytes.Repeat([]byte("["), maxDepth+1)
	deep = append(deep, bytes.Repeat([]byte("]"), maxDepth+1)...)
	if _, ok := canonical(nil, deep, nil); ok {
		t.Error("canonical took a value deeper than encoding/json decodes")
	}
	if _, ok := canonical(nil, deep[1:len(deep)-1], nil); !ok {
		t.Error("canonical refused a value as deep as encoding/json decodes")
	}
}

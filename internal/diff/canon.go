package diff

import "github.com/tapedeck/tapedeck/internal/canon"

// canonical appends to dst the canonical spelling of the JSON value raw
// (package canon, by which replay also matches params): two frames are equal
// exactly when their spellings are. When id is not nil and raw is an object,
// the value of its top-level "id" member is spelled as the string id
// instead. ok is false when raw is not one valid JSON value.
//
// It is the fast way to a frame's key: no tree of interfaces is built.
func canonical(dst, raw []byte, id *string) (_ []byte, ok bool) {
	if id != nil {
		return canon.AppendWithID(dst, raw, *id)
	}
	return canon.Append(dst, raw)
}

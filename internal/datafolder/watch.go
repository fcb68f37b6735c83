package datafolder

// Use is whether a run used a folder it was given.
type Use uint8

const (
	// Unknown: the system could not tell (no notifications here, and
	// nothing in the folder changed).
	Unknown Use = iota
	// Used: the plugin opened, made, changed or removed something in it.
	Used
	// Unused: it did none of that.
	Unused
)

// maxWatched bounds the folders a Watcher watches, each given folder's
// own and its folders', two levels down.
const maxWatched = 256

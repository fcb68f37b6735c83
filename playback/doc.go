// Package playback owns tapedeck's second use case: playing a recording
// back to a plugin and comparing what it says now with what it said then.
//
// A Recording is read from a tape file (ReadTape) or from the store
// (FromStore), or from either by reference (Load; OpenStream reads one a
// frame at a time). Replay runs the plugin under the replay engine with
// typed Options (the zero value is the command line's defaults), redacts
// its live frames the way the recording was redacted, compares them with
// the recording under the ignore rules and the filters (placeholders for
// noise inside strings) of the options and of tapedeck.json beside a tape,
// and returns an Outcome: the live run, its differences, the notes and,
// when it differs, the drift of the plugin's surroundings since the
// recording. Values the plugin chose itself are carried back (the
// profile's carry rules and tapedeck.json's), and what the host profile
// leaves to timing (the order of independent streams, the number of
// reports on the plugin's own work) is a note, not a difference
// (timing.go). Compare does the same for two recordings without running
// anything. Suite and RunTape replay many tapes at once, as tapedeck test
// and package tapetest do.
//
// This is the Go API for a plugin's own go test, and it is kept small.
// The rooms that build on a replay are tapedeck's own, under internal/:
// filter (filters and tapedeck.json), noise (replay --runs), pending
// (updates for review) and shrink; an Outcome gives them what they replay
// again or compare again with (Again, Filtered, Recompare,
// LiveFingerprint). It prints nothing: what a person or a machine sees is
// package present's.
package playback

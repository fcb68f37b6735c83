// Package playback owns tapedeck's second use case: playing a recording
// back to a plugin and comparing what it says now with what it said then.
//
// A Recording is read from a tape file (ReadTape) or from the store
// (FromStore), or from either by reference (Load). Replay runs the plugin
// under the replay engine with typed Options (the zero value is the
// command line's defaults), redacts its live frames the way the recording
// was redacted, compares them with the recording under the ignore rules and
// the filters (placeholders for noise inside strings) of the options and
// of tapedeck.json beside a tape, and returns an Outcome:
// the live run, its differences, the notes and, when it differs, the drift
// of the plugin's surroundings since the recording. Compare does the same
// for two recordings without running anything. WritePending writes an
// outcome's change beside its tape as NAME.jsonl.new for review; Noise
// replays again to tell noise from change and proposes filters and ignore
// rules for it; Suite replays many tapes at once; Shrink finds a smaller
// tape that still shows the same difference.
//
// It prints nothing: what a person or a machine sees is package render's.
package playback

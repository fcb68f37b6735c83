package playback

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestShrinkNamesAtMostTenKeptSteps: a shrink stopped early keeps many
// steps; its result names the first KeptListed and counts the rest, so
// that shrink prints a line of ten, not one of 250,000.
func TestShrinkNamesAtMostTenKeptSteps(t *testing.T) {
	lines := []line{initIn}
	for i := range 30 {
		lines = append(lines, click(fmt.Sprintf("e%d", i)))
	}
	lines = append(lines, click("fire"), shutdown, "eof", initOut)
	for i := range 30 {
		lines = append(lines, `out {"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"`+fmt.Sprintf("e%d", i)+`"}}`)
	}
	lines = append(lines, `out {"jsonrpc":"2.0","method":"ui/setBadge","params":{"text":"fire"}}`)
	rec := writeTape(t, append(lines, "exit")...)
	out := filepath.Join(t.TempDir(), "min.jsonl")
	res, err := Shrink(context.Background(), rec, &ShrinkOptions{Replay: Options{Env: fixtureEnv("badges", "FIXTURE_BUG=1")}, Jobs: 1, MaxRuns: 2, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Left <= KeptListed || len(res.Kept) != KeptListed || res.KeptMore != res.Left-KeptListed {
		t.Errorf("%d steps left: %d named, %d more counted; want %d named and the rest counted", res.Left, len(res.Kept), res.KeptMore, KeptListed)
	}
}

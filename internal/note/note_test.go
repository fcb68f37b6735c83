package note

import "testing"

// TestStringWordsEachKind: each kind words its fields as tapedeck has
// always printed that note.
func TestStringWordsEachKind(t *testing.T) {
	for _, c := range []struct {
		n    Note
		want string
	}{
		{Text("hello-go is not here; using /bin/hello-go"), "hello-go is not here; using /bin/hello-go"},
		{Note{Kind: Answered, Method: "ui/setPanel", Seq: 5}, "ui/setPanel (replay seq 5) answered from a recorded call whose params differed"},
		{Note{Kind: AnsweredUnkept, Method: "x"}, "x (not kept: past what the recording can explain) answered from a recorded call whose params differed"},
		{Note{Kind: Exited, Step: Step{Seq: 11}}, "the plugin exited before host frame seq 11; the rest was not sent"},
		{Note{Kind: Exited, Step: Step{Seq: 4, Script: true}}, "the plugin exited before script line 4; the rest was not sent"},
		{Note{Kind: GaveUp, Step: Step{Seq: 6}, Text: "after 30s: gave up waiting"}, "host frame seq 6 sent after 30s: gave up waiting"},
		{Note{Kind: Late, Method: "m", Seq: 3}, "the plugin made its m request (recorded seq 3) later than recorded; it was answered then"},
		{Note{Kind: Unasked, Method: "m", Seq: 3, Answer: 7}, "the plugin never made the m request (recorded seq 3) that the host answered at seq 7; the answer was not sent"},
		{Note{Kind: Unasked, Method: "m", Seq: 3, Answer: 7, Text: "after waiting 2s for it"}, "the plugin never made the m request (recorded seq 3) that the host answered at seq 7; the answer was not sent (the wait for the request was given up after waiting 2s for it)"},
		{Note{Kind: Unused, Text: "COSMICA_HOME"}, "the plugin did not use the folder this run gave it in COSMICA_HOME for a fresh start (it opened, made and changed nothing in it): it may keep its state elsewhere (a default folder, when it finds no settings there), which this run then read and wrote for real, so a pass says little; name the variable it reads its folder from, or carry a copy of the folder beside the tape (tapedeck play --fresh-dir COSMICA_HOME, then Keep it)"},
		{Note{Kind: ScriptLate, Method: "m", Step: Step{Seq: 2, Script: true}}, "the plugin made the m request that script line 2 answers later than expected; it was answered then"},
		{Note{Kind: ScriptUnasked, Step: Step{Seq: 2, Script: true}}, "the plugin never made a request that script line 2 answers; the answer was not sent"},
	} {
		if got := c.n.String(); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.n, got, c.want)
		}
	}
}

// TestLikeLeavesOutTheFrames: notes that say the same of other frames
// are alike; another method, another kind or other words are not.
func TestLikeLeavesOutTheFrames(t *testing.T) {
	a := Note{Kind: GaveUp, Step: Step{Seq: 6}, Text: "after 30s: gave up waiting"}
	b := Note{Kind: GaveUp, Step: Step{Seq: 9}, Text: "after 30s: gave up waiting"}
	if a.Like() != b.Like() {
		t.Errorf("%v and %v are not alike", a, b)
	}
	for _, c := range []Note{
		{Kind: GaveUp, Step: Step{Seq: 6}, Text: "after 2s: gave up waiting"},
		{Kind: Exited, Step: Step{Seq: 6}},
		{Kind: GaveUp, Step: Step{Seq: 6, Script: true}, Text: "after 30s: gave up waiting"},
	} {
		if c.Like() == a.Like() {
			t.Errorf("%v is alike %v", c, a)
		}
	}
	if (Note{Kind: Late, Method: "a", Seq: 1}).Like() == (Note{Kind: Late, Method: "b", Seq: 1}).Like() {
		t.Error("notes of two methods are alike")
	}
}

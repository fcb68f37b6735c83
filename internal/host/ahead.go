package host

import "container/heap"

// answersAhead tells the main loop, at a step given up on, whether an
// answer step right after it (before the next step that is no answer)
// already has its request made (see runner.laterAnswerWaiting), without
// reading those steps each time: a recording whose host piped its answers
// ahead of the plugin's requests has a run of answer steps as long as the
// requests, and a plugin that makes none gives up each one (40,000 took
// 21 s, growing with the square of them).
type answersAhead struct {
	// stepOf is, by call (plan.all), the step that sends its answer, -1
	// for none.
	stepOf []int32
	// made are the answer steps whose request the plugin made, the least
	// first; those the main loop is past are dropped as it looks.
	made stepHeap
	// end is the first step after the run of answer steps the last look
	// was in, which is every later look's in the same run; read counts
	// the steps read to find it.
	end, read int
}

// newAnswersAhead indexes the answer steps of p.
func newAnswersAhead(p *plan) answersAhead {
	a := answersAhead{stepOf: make([]int32, len(p.all))}
	for i := range a.stepOf {
		a.stepOf[i] = -1
	}
	for i := range p.steps {
		if st := &p.steps[i]; st.kind == sendAnswer {
			a.stepOf[st.call.index] = int32(i)
		}
	}
	return a
}

// requested notes that the plugin made c's request.
func (a *answersAhead) requested(c *call) {
	if int(c.index) >= len(a.stepOf) {
		return // a call the plan did not have when the replay began
	}
	if s := a.stepOf[c.index]; s >= 0 {
		heap.Push(&a.made, s)
	}
}

// waiting reports whether an answer step after step i, before the next
// step of steps that is no answer, has its request made. The main loop
// asks with i growing.
func (a *answersAhead) waiting(steps []step, i int) bool {
	for len(a.made) > 0 && int(a.made[0]) <= i {
		heap.Pop(&a.made)
	}
	if len(a.made) == 0 {
		return false
	}
	if a.end <= i {
		a.end = i + 1
		for a.end < len(steps) && steps[a.end].kind == sendAnswer {
			a.end++
			a.read++
		}
	}
	return int(a.made[0]) < a.end
}

// stepHeap is a min-heap of step indexes (container/heap).
type stepHeap []int32

func (h stepHeap) Len() int           { return len(h) }
func (h stepHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h stepHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *stepHeap) Push(x any)        { *h = append(*h, x.(int32)) }
func (h *stepHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

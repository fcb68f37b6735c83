package shrink

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
)

// needs is a test that fails when keep holds every step of want.
func needs(want ...int) Test {
	return func(ctx context.Context, keep []int) (bool, error) {
		for _, w := range want {
			if !slices.Contains(keep, w) {
				return false, nil
			}
		}
		return true, nil
	}
}

func TestMinimizeFindsTheStepsTheFailureNeeds(t *testing.T) {
	cases := []struct {
		n       int
		want    []int
		maxRuns int
	}{
		{40, []int{7, 31}, 60},
		{40, []int{0, 39}, 60},
		{40, []int{12}, 30},
		{40, nil, 1},
		{40, []int{3, 4, 5}, 80},
		{1, []int{0}, 2},
		{0, nil, 0},
	}
	for _, c := range cases {
		for _, jobs := range []int{1, 4} {
			res, err := Minimize(context.Background(), c.n, needs(c.want...), Options{Jobs: jobs})
			if err != nil {
				t.Fatalf("Minimize(%d, needs %v, -j %d): %v", c.n, c.want, jobs, err)
			}
			if !slices.Equal(res.Keep, c.want) && !(len(res.Keep) == 0 && len(c.want) == 0) {
				t.Errorf("Minimize(%d, needs %v, -j %d).Keep = %v", c.n, c.want, jobs, res.Keep)
			}
			if jobs == 1 && res.Runs > c.maxRuns {
				t.Errorf("Minimize(%d, needs %v, -j 1) took %d runs, want at most %d", c.n, c.want, res.Runs, c.maxRuns)
			}
			t.Logf("n=%d needs %v -j %d: %d runs", c.n, c.want, jobs, res.Runs)
		}
	}
}

func TestMinimizeStopsAtMaxRuns(t *testing.T) {
	var ran atomic.Int32
	test := func(ctx context.Context, keep []int) (bool, error) {
		ran.Add(1)
		return needs(7, 31)(ctx, keep)
	}
	res, err := Minimize(context.Background(), 40, test, Options{Jobs: 2, MaxRuns: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Bounded || res.Runs > 5 || int(ran.Load()) > 5 {
		t.Errorf("MaxRuns 5: bounded %v, runs %d, tests called %d", res.Bounded, res.Runs, ran.Load())
	}
	if !slices.Contains(res.Keep, 7) || !slices.Contains(res.Keep, 31) {
		t.Errorf("MaxRuns 5: Keep %v lost a needed step", res.Keep)
	}
}

func TestMinimizeReturnsATestsError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Minimize(context.Background(), 10, func(context.Context, []int) (bool, error) { return false, boom }, Options{Jobs: 3})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

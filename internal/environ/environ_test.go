package environ

import (
	"slices"
	"testing"
)

func TestLookupTakesTheLastSetting(t *testing.T) {
	t.Parallel()
	env := []string{"A=1", "B", "A=2", "C=x=y"}
	for _, c := range []struct {
		key, want string
		ok        bool
	}{{"A", "2", true}, {"B", "", false}, {"C", "x=y", true}, {"D", "", false}} {
		if v, ok := Lookup(env, c.key); v != c.want || ok != c.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.key, v, ok, c.want, c.ok)
		}
	}
}

func TestSetReplacesEverySettingAndLeavesEnvAlone(t *testing.T) {
	t.Parallel()
	env := []string{"A=1", "B=2", "A=3"}
	got := Set(env, "A", "9")
	if want := []string{"B=2", "A=9"}; !slices.Equal(got, want) {
		t.Errorf("Set = %q, want %q", got, want)
	}
	if want := []string{"A=1", "B=2", "A=3"}; !slices.Equal(env, want) {
		t.Errorf("Set changed its input: %q", env)
	}
}

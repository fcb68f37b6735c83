//go:build !linux

package playground

// newNotifier: only Linux's inotify is used; elsewhere the watch polls.
func newNotifier() (notifier, error) { return nil, errNoNotifier }

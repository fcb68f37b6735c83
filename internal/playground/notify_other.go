//go:build !linux

package playground

import "errors"

// newNotifier: only Linux's inotify is used; elsewhere the watch polls.
func newNotifier() (notifier, error) {
	return nil, errors.New("no inotify on this system")
}

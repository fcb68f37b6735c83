package frame

import "fmt"

// Describe says what a lifecycle event was, for a person ("the plugin
// exited with code 0"); for a line it returns "".
func (f *Frame) Describe() string {
	switch f.Event {
	case NoEvent:
		return ""
	case EventEOF:
		return "the host closed the plugin's stdin"
	case EventSignal:
		return f.Signal() + " reached the shim and was passed on"
	case EventClosed:
		return "the plugin closed its stdout"
	case EventGone:
		return "the host stopped reading; later output was recorded, not delivered"
	case EventExit:
		switch {
		case f.Signal() != "":
			return "the plugin was killed by " + f.Signal()
		case f.Code() != nil:
			return fmt.Sprintf("the plugin exited with code %d", *f.Code())
		}
		return "the plugin exited"
	}
	return f.Event.String()
}

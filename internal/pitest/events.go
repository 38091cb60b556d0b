package pitest

import (
	"context"
	"testing"

	"github.com/pikit-dev/pikit/pirpc"
)

// Until reads c's events until stop returns true for one and returns every
// event read, that one included. It fails the test when the event channel
// closes first (naming Pi's exit error) or ctx ends, listing the event
// types read so far.
func Until(t testing.TB, ctx context.Context, c *pirpc.Client, stop func(pirpc.Event) bool) []pirpc.Event {
	t.Helper()
	var got []pirpc.Event
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("pitest: events closed (pi: %v) after %v", c.Err(), eventTypes(got))
			}
			got = append(got, ev)
			if stop(ev) {
				return got
			}
		case <-ctx.Done():
			t.Fatalf("pitest: timed out after events %v", eventTypes(got))
		}
	}
}

func eventTypes(evs []pirpc.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.EventType())
	}
	return out
}

package pirpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// TestMain lets this test binary act as the fake Pi and fails on leaked
// goroutines.
func TestMain(m *testing.M) { pitest.Main(m) }

// testCtx bounds one test; Pi tests never wait forever.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// start starts a client that is closed at cleanup.
func start(t *testing.T, opts pirpc.Options) *pirpc.Client {
	t.Helper()
	c, err := pirpc.Start(testCtx(t), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func settled(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok }

func types(evs []pirpc.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.EventType())
	}
	return out
}

func find[T pirpc.Event](evs []pirpc.Event) []T {
	var out []T
	for _, ev := range evs {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

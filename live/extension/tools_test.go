package extension

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/pikit-dev/pikit/live"
)

// TestUnitStatusSchema: live_unit_status offers the model exactly the
// statuses the endpoint accepts (a fresh-user trial's model could only
// learn them from a 400), and keeps the other members.
func TestUnitStatusSchema(t *testing.T) {
	var s struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(unitStatusSchema(), &s); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Properties["status"].Enum, live.AgentStatuses(); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("status enum = %v, want %v", got, want)
	}
	for _, name := range []string{"unit_id", "reason", "guess"} {
		if _, ok := s.Properties[name]; !ok {
			t.Errorf("no %s member", name)
		}
	}
	if !slices.Equal(s.Required, []string{"unit_id", "status"}) {
		t.Errorf("required = %v", s.Required)
	}
}

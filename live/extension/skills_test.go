package extension

import (
	"testing"

	"github.com/pikit-dev/pikit/piext/piexttest"
)

// The shipped skill keeps Pi's system prompt a one-byte string
// (piexttest.CheckSkills).
func TestSkills_KeepThePromptOneByte(t *testing.T) {
	if err := piexttest.CheckSkills(skills()); err != nil {
		t.Error(err)
	}
}

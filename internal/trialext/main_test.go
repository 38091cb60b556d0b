package trialext_test

import (
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

func TestMain(m *testing.M) { pitest.Main(m) }

package taskbar_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pikit-dev/pikit/taskbar"
)

// TestHandler_Allowed checks that Allowed is the same decision the API
// routes apply: every case is also sent to GET /state, which must answer
// 403 exactly when Allowed is false.
func TestHandler_Allowed(t *testing.T) {
	h := taskbar.NewHandler(deadOwner{}, &taskbar.Options{AllowedHosts: []string{"dev.example.test"}})
	tests := []struct {
		name, host, peer string
		want             bool
	}{
		{"loopback localhost", "localhost:8080", "127.0.0.1:5000", true},
		{"loopback ipv6", "[::1]:8080", "[::1]:5000", true},
		{"loopback sub.localhost", "app.localhost", "127.0.0.1:5000", true},
		{"loopback allowed host", "dev.example.test", "127.0.0.1:5000", true},
		{"remote allowed host", "dev.example.test:3000", "192.0.2.7:5000", true},
		{"remote localhost", "localhost:8080", "192.0.2.7:5000", false},
		{"rebinding host on loopback", "attacker.example:8080", "127.0.0.1:5000", false},
		{"empty host", "", "127.0.0.1:5000", false},
		{"unix socket peer", "localhost", "@", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://x"+taskbar.DefaultMountBase+"/state", nil)
			r.Host, r.RemoteAddr = tt.host, tt.peer
			if got := h.Allowed(r); got != tt.want {
				t.Errorf("Allowed = %v, want %v", got, tt.want)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if forbidden := rec.Code == http.StatusForbidden; forbidden == tt.want {
				t.Errorf("GET /state = %d while Allowed = %v", rec.Code, tt.want)
			}
		})
	}
}

package runtime

import "testing"

// TestClassifyFailure pins the failure table on texts of the shapes Pi and
// providers send, and the fallback for anything else.
func TestClassifyFailure(t *testing.T) {
	for text, want := range map[string]string{
		"No API key found for fake.\n\nUse /login to log into a provider":       ErrNoModel,
		"401 Incorrect API key provided: sk-…":                                  ErrProviderRefused,
		`403: {"error":"forbidden"}`:                                            ErrProviderRefused,
		"429 Rate limit reached for requests":                                   ErrProviderRateLimit,
		"529 Overloaded":                                                        ErrProviderRateLimit,
		"400 This model's maximum context length is 8192 tokens":                ErrContextTooLong,
		"prompt is too long: 210000 tokens > 200000 maximum":                    ErrContextTooLong,
		"Connection error.":                                                     ErrProviderUnreachable,
		"request to http://127.0.0.1:9/v1 failed, reason: connect ECONNREFUSED": ErrProviderUnreachable,
		"500: {\"message\":\"scripted error\"}":                                 "fallback",
		"":                                                                      "fallback",
	} {
		if got := classifyFailure(text, "fallback"); got != want {
			t.Errorf("classifyFailure(%q) = %q, want %q", text, got, want)
		}
	}
}

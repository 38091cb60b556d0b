package runtime

import "strings"

// Fixed task errors of the known failure classes (see the package doc's
// failure table). They replace Pi's and the provider's own text, which
// never reaches a snapshot or a log.
const (
	ErrNoModel             = "Pi has no usable model or API key for its provider; configure a provider (an API key in the environment, /login in pi, or models.json)"
	ErrProviderRefused     = "The model provider refused Pi's credentials; check the API key or log in again"
	ErrProviderRateLimit   = "The model provider is rate limiting requests; wait a moment and run the task again"
	ErrContextTooLong      = "The conversation is too long for the model's context; start a new conversation"
	ErrProviderUnreachable = "Pi could not reach the model provider; check the network and the provider's address"
)

// failureClasses is the failure table: the first class with a pattern
// contained in Pi's error text (ASCII case-folded) wins. Order matters:
// an HTTP status prefix is checked before looser words.
var failureClasses = [...]struct {
	msg      string
	patterns []string
}{
	{ErrNoModel, []string{"no api key found", "no model selected", "no model configured", "no models available"}},
	{ErrProviderRefused, []string{"401", "403", "unauthorized", "forbidden", "invalid api key", "invalid x-api-key",
		"incorrect api key", "authentication", "permission denied", "permission_error"}},
	{ErrProviderRateLimit, []string{"429", "rate limit", "rate_limit", "too many requests", "quota", "overloaded"}},
	{ErrContextTooLong, []string{"context length", "context_length", "context window", "maximum context",
		"prompt is too long", "too many tokens", "token limit", "exceeds the context"}},
	{ErrProviderUnreachable, []string{"econnrefused", "enotfound", "etimedout", "econnreset", "eai_again",
		"fetch failed", "connection error", "connection refused", "network error", "socket hang up", "getaddrinfo"}},
}

// classifyFailure maps Pi's error text to the fixed message of its failure
// class, or returns fallback when no class matches. The text itself is
// only matched, never kept.
func classifyFailure(text, fallback string) string {
	if text == "" {
		return fallback
	}
	lower := strings.ToLower(text)
	for _, c := range failureClasses {
		for _, p := range c.patterns {
			if strings.Contains(lower, p) {
				return c.msg
			}
		}
	}
	return fallback
}

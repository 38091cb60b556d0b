package piinstall

import "strings"

// PlaceholderModel is the provider and the id of the model Pi reports in
// get_state when no model is configured at all; a prompt then fails with
// "No API key found for the selected model." (reference
// pi-rpc-and-extensions.md §1.4, observed on 1.6.0).
const PlaceholderModel = "unknown"

// ConfigureModel says how to give Pi a model, in the credential sources of
// reference §5.1: a provider's API key in the environment, Pi's /login
// (its own hint, §1.4), or a provider in models.json of the agent
// directory. It completes a sentence that says Pi has no model.
const ConfigureModel = "configure a model provider in Pi: set a provider's API key in the environment " +
	"(e.g. ANTHROPIC_API_KEY), run `pi` and use /login, or add a provider to models.json " +
	"in Pi's agent directory (~/.pi/agent, or $PI_CODING_AGENT_DIR)"

// ModelUsable reports whether the model Pi reports, as get_state's
// provider and id, names a configured model: the id is not empty, and
// neither is [PlaceholderModel]. An empty provider (Pi sent the model as a
// bare id string) is accepted.
func ModelUsable(provider, id string) bool {
	return id != "" && id != PlaceholderModel && provider != PlaceholderModel
}

// ModelLabelUsable is [ModelUsable] for a display label: "provider/id", or
// a bare id without "/" (the taskbar snapshot's session model, reference
// taskbar.md §6). The provider is the text before the first "/", since ids
// may hold "/" themselves.
func ModelLabelUsable(label string) bool {
	provider, id, ok := strings.Cut(label, "/")
	if !ok {
		provider, id = "", label
	}
	return ModelUsable(provider, id)
}

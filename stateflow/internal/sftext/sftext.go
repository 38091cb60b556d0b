// Package sftext holds upstream's exact texts that package stateflow and
// stateflow/store both report: the invalid materialized state of a
// temporal stream with its reasons (reference §2.4) and the document nested
// too deeply. Nothing here is StateFlow API.
package sftext

import "fmt"

// MaxDepth is stateflow.MaxDepth (see there why 1000).
const MaxDepth = 1000

// Reasons of "Invalid temporal materialized semantic state in <scope>
// checkpoint|tail: <reason>", upstream's exact texts.
const (
	StateNonFinite   = "expected finite, acyclic JSON data"
	StateNotObject   = "expected a semantic object"
	StateNull        = "null is not allowed"
	StateInvalidData = "invalid semantic fields or artifact metadata"
)

// StateMsg is upstream's text for an invalid state in a stream: where is
// "checkpoint" or "tail", reason one of the State* reasons.
func StateMsg(scope, where, reason string) string {
	return fmt.Sprintf("Invalid temporal materialized semantic state in %s %s: %s", scope, where, reason)
}

// TooDeepMsg is the text of a document nested deeper than [MaxDepth]:
// "<what> is nested too deeply (more than 1000 levels)".
func TooDeepMsg(what string) string {
	return fmt.Sprintf("%s is nested too deeply (more than %d levels)", what, MaxDepth)
}

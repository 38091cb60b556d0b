package midcompact

import "errors"

// errNotObject reports JSON that is not an object where one is required.
var errNotObject = errors.New("midcompact: not a JSON object")

// toolError is a failure the tool reports as `Error: <msg>` text (reference
// §1.1: the tool never throws). err is the matchable cause.
type toolError struct {
	msg string
	err error
}

func (e *toolError) Error() string { return e.msg }
func (e *toolError) Unwrap() error { return e.err }

package browsertest

// EvalJSON exposes Tab.evalJSON: the JSON of an expression's value, or the
// evaluation's error.
func EvalJSON(tab *Tab, expr string) (string, error) { return tab.evalJSON(expr) }

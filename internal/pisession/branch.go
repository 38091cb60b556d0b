package pisession

import "slices"

// Branch returns the path from a root to the entry leafID, root first, as
// Pi's getBranch. leafID "" means the last entry in file order (Pi's leaf
// after loading); a file without entries then gives an empty path.
//
// Errors (*[BranchError]): [ErrUnknownEntry] when no entry has leafID;
// [ErrMissingParent] when a parentId names no entry, returned with the path
// from that entry down to the leaf; [ErrCycle] when parentId links loop.
func (f *File) Branch(leafID string) ([]Entry, error) {
	var i int
	switch {
	case leafID != "":
		var ok bool
		if i, ok = f.index[leafID]; !ok {
			return nil, &BranchError{Kind: ErrUnknownEntry, ID: leafID}
		}
	case len(f.Entries) == 0:
		return nil, nil
	default:
		i = len(f.Entries) - 1
	}
	var path []Entry
	for {
		e := f.Entries[i]
		path = append(path, e)
		if len(path) > len(f.Entries) {
			return nil, &BranchError{Kind: ErrCycle, ID: e.ID}
		}
		if e.ParentID == "" {
			break
		}
		p, ok := f.index[e.ParentID]
		if !ok {
			slices.Reverse(path)
			return path, &BranchError{Kind: ErrMissingParent, ID: e.ID, ParentID: e.ParentID}
		}
		i = p
	}
	slices.Reverse(path)
	return path, nil
}

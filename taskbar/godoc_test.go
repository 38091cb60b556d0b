package taskbar_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// internalRef matches what a reader of `go doc` cannot follow: issue
// numbers and sections of our internal reference notes.
var internalRef = regexp.MustCompile(`(?i)\bissues? #?\d|reference[^.]{0,40}§|§\d`)

// TestGoDoc_NoInternalReferences: the documentation `go doc` shows for the
// taskbar packages (package docs and every exported declaration) cites
// seeds and upstream facts, never issue numbers or reference sections.
func TestGoDoc_NoInternalReferences(t *testing.T) {
	for _, dir := range []string{".", "broker", "runtime", "proxy"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			files := make([]*ast.File, 0, len(p.Files))
			for _, f := range p.Files {
				files = append(files, f)
			}
			d, err := doc.NewFromFiles(fset, files, "example.com/"+dir)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what, text string) {
				if m := internalRef.FindString(text); m != "" {
					t.Errorf("%s: go doc of %s shows %q", dir, what, m)
				}
			}
			check("the package", d.Doc)
			for _, v := range append(d.Consts, d.Vars...) {
				check(strings.Join(v.Names, ","), v.Doc)
			}
			for _, f := range d.Funcs {
				check(f.Name, f.Doc)
			}
			for _, ty := range d.Types {
				check(ty.Name, ty.Doc)
				for _, v := range append(ty.Consts, ty.Vars...) {
					check(strings.Join(v.Names, ","), v.Doc)
				}
				for _, f := range append(ty.Funcs, ty.Methods...) {
					check(ty.Name+"."+f.Name, f.Doc)
				}
				if st, ok := ty.Decl.Specs[0].(*ast.TypeSpec); ok {
					if s, ok := st.Type.(*ast.StructType); ok {
						for _, fl := range s.Fields.List {
							check(ty.Name+" field", fl.Doc.Text()+fl.Comment.Text())
						}
					}
				}
			}
		}
	}
}

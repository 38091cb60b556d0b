package client_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/taskbar/client"
)

func TestMarkup(t *testing.T) {
	got, err := client.Markup(client.Bootstrap{MountBase: "/dev/pi-browser-taskbar", CSRFToken: `t</script><&"`, RemoteAccess: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `<script type="application/json" id="pi-browser-taskbar-bootstrap" style="display:none!important">{"mount_base":"/dev/pi-browser-taskbar","csrf_token":"t\u003c/script\u003e\u003c\u0026\"","remote_access":true}</script><script src="/dev/pi-browser-taskbar/assets/client.js" defer></script>`
	if string(got) != want {
		t.Errorf("Markup =\n%s\nwant\n%s", got, want)
	}
	withApp, err := client.Markup(client.Bootstrap{MountBase: "/x", ProjectApp: "demo_web"})
	if err != nil || !strings.Contains(string(withApp), `"project_app":"demo_web"`) {
		t.Errorf("Markup with project app = %s, %v", withApp, err)
	}
	for _, bad := range []client.Bootstrap{
		{MountBase: ""}, {MountBase: "relative"}, {MountBase: "/trailing/"}, {MountBase: "/a/../b"},
		{MountBase: "/q?x=1"}, {MountBase: "/f#x"}, {MountBase: "/sp ace"}, {MountBase: `/"quote`},
		{MountBase: "/ok", ProjectApp: "Demo"}, {MountBase: "/ok", ProjectApp: "1app"},
	} {
		if _, err := client.Markup(bad); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("Markup(%+v) error = %v, want ErrInvalid", bad, err)
		}
	}
}

// annotationRE is the client's gotmpl boundary grammar (client.js gotmplAnnotation).
var annotationRE = regexp.MustCompile(`^\s*(BEGIN|END)\s+gotmpl:([^\r\n]*?\S)\s*$`)

func TestSourceAnnotation(t *testing.T) {
	begin, end, err := client.SourceAnnotation("examples/app/templates/cards.html")
	if err != nil {
		t.Fatal(err)
	}
	if begin != "<!-- BEGIN gotmpl:examples/app/templates/cards.html -->" || end != "<!-- END gotmpl:examples/app/templates/cards.html -->" {
		t.Errorf("SourceAnnotation = %q, %q", begin, end)
	}
	for _, bad := range []string{"", "/abs/x.html", `a\b.html`, "C:/x.html", "a//b.html", "./a.html", "a/../b.html",
		"a/.", "a b.html", "a\nb", "a--b.html", "a>b.html", "x/", strings.Repeat("a", 501), "bad\xff"} {
		if _, _, err := client.SourceAnnotation(bad); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("SourceAnnotation(%q) error = %v, want ErrInvalid", bad, err)
		}
	}
}

// FuzzSourceAnnotation checks that every accepted path yields comments the
// client parses back to the same path and that cannot end the comment early.
func FuzzSourceAnnotation(f *testing.F) {
	for _, s := range []string{"a.html", "examples/app/templates/cards.html", "ü/ö.tmpl", "a--b", "x/../y", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		begin, end, err := client.SourceAnnotation(path)
		if err != nil {
			return
		}
		for kind, c := range map[string]string{"BEGIN": string(begin), "END": string(end)} {
			inner, ok := strings.CutPrefix(c, "<!--")
			inner, ok2 := strings.CutSuffix(inner, "-->")
			if !ok || !ok2 || strings.Contains(inner, "--") || strings.Contains(inner, ">") {
				t.Fatalf("comment %q can end early", c)
			}
			m := annotationRE.FindStringSubmatch(inner)
			if m == nil || m[1] != kind || m[2] != path {
				t.Fatalf("comment %q does not parse back to %s %q", c, kind, path)
			}
		}
	})
}

func TestAssetsMatchBuild(t *testing.T) {
	names := map[string]bool{}
	entries, err := fsReadDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names[e] = true
	}
	if client.Embedded {
		if !names[client.ScriptName] || !names[client.StyleName] || len(names) != 2 {
			t.Errorf("pitaskbar build embeds %v, want exactly %s and %s", names, client.ScriptName, client.StyleName)
		}
	} else if len(names) != 0 {
		t.Errorf("build without pitaskbar embeds %v, want nothing", names)
	}
}
